"""Tables for the terminal and for bench/results/latest.md, from one description."""

from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        widths = [
            max(len(h), *(len(r[i]) for r in self.rows)) if self.rows else len(h)
            for i, h in enumerate(self.headers)
        ]

        def line(cells: list[str]) -> str:
            return "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )

        out = [self.title, "=" * len(self.title), line(self.headers)]
        out.append("  ".join("-" * w for w in widths))
        out += [line(r) for r in self.rows]
        out += [f"  * {n}" for n in self.notes]
        return "\n".join(out)

    def markdown(self) -> str:
        out = [f"### {self.title}", "", "| " + " | ".join(self.headers) + " |"]
        out.append(
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.headers))) + "|"
        )
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        if self.notes:
            out.append("")
            out += [f"- {n}" for n in self.notes]
        return "\n".join(out)


@dataclass
class Report:
    tables: list[Table] = field(default_factory=list)
    # Headline numbers by name, for the summary and for tests that check they exist.
    figures: dict[str, float] = field(default_factory=dict)

    def extend(self, other: "Report") -> None:
        self.tables += other.tables
        self.figures.update(other.figures)


def ms(value: float) -> str:
    return f"{value:.1f}"


def times(value: float) -> str:
    return f"{value:.2f}x"


def verdict(ok: bool) -> str:
    return "ok" if ok else "OVER"
