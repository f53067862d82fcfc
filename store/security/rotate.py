"""Seal-key rotation: re-seal every sealed column under the active key, in batches.

Put the new key first in AGENTRT_SEAL_KEYS (`new:...,old:...`), run
`python -m agentrt.store.security.rotate` (or `agentrt-api rotate`), then drop the old key.
Each batch is its own transaction; the command is safe to stop and run again.
"""

import argparse
import sys

from sqlalchemy import select, update

from agentrt.store.db.context import StoreContext
from agentrt.store.db.sealing import PREFIX
from agentrt.store.security.sealed import COLUMNS


def rotate(ctx: StoreContext, batch: int = 500) -> dict[str, int]:
    """Re-seal values not sealed under the active key (and seal a value of a column sealed
    since a migration that an older worker wrote in the clear); counts per table.column."""
    active_prefix = f"{PREFIX}.{ctx.sealer.active}.%"
    counts: dict[str, int] = {}
    for spec in COLUMNS:  # every sealed column (store/security/sealed.py)
        col = getattr(spec.model, spec.column)
        done = 0
        while True:
            with ctx.sessions.begin() as s:
                rows = s.scalars(
                    select(spec.model)
                    .where(col.is_not(None), col.not_like(active_prefix))
                    .order_by(*(getattr(spec.model, k) for k in spec.keys))
                    .limit(batch)
                    .with_for_update()
                ).all()
                for r in rows:
                    row_id = spec.row_of(r)
                    value = getattr(r, spec.column)
                    if spec.sealed_since and not value.startswith(f"{PREFIX}."):
                        plain = value  # written in the clear by a worker older than the seal
                    else:
                        plain = spec.open(ctx.sealer, value, row_id)
                    sealed = spec.seal(ctx.sealer, plain, row_id)
                    s.execute(
                        update(spec.model)
                        .where(*(getattr(spec.model, k) == getattr(r, k) for k in spec.keys))
                        .values({spec.column: sealed})
                    )
            done += len(rows)
            if len(rows) < batch:
                break
        counts[f"{spec.table}.{spec.column}"] = done
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m agentrt.store.security.rotate", description=__doc__
    )
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args(argv)
    from agentrt.core.settings import Settings
    from agentrt.store.db.engine import make_engine, make_sessionmaker
    from agentrt.store.db.sealing import Sealer

    settings = Settings()
    sealer = Sealer.from_b64(settings.read_seal_keys())
    engine = make_engine(settings.database.resolved_url())
    try:
        counts = rotate(StoreContext(make_sessionmaker(engine), sealer), args.batch)
    finally:
        engine.dispose()
    for name, n in counts.items():
        sys.stdout.write(f"{name}: {n} re-sealed under key {sealer.active}\n")


if __name__ == "__main__":
    main()
