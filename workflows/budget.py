"""The run's budget ledger: what it spent, what it reserved, and what room is left.
Pure state transitions, unit-tested without Temporal (tests/workflows/test_budget_ledger.py).

A ceiling is never passed: whatever consumes the budget reserves its worst case first and
goes ahead only with a reservation (`reserve` answers None when the amount does not fit
in the room left: the ceiling minus the spend minus every reservation outstanding). When
it is done its reservation is settled to what it actually used (`settle`, which must not
exceed what was reserved for the ceiling to hold), or released unused (`release`).

Several reservations may be outstanding at once, so calls that run in parallel reserve
together: each takes its own amount, and together they never exceed the room.

- A model call (workflows/_steps.py `model`) reserves the whole room left and hands it to
  the model activity as its `Allowance`; the activity calls the provider only if the
  call's worst case (contracts/budget.py) fits in it, then the reservation settles to the
  call's usage.
- A delegated child run reserves from its parent's ledger (workflows/children.py `_share`),
  as a remote agent call is to: `reserve(Allowance(tokens=..., cost_usd=...))` before it
  starts (None: it does not start; the call is refused `BudgetExhausted`), the child's
  budget being capped by the reservation's amount, and `RunContext.spend(reservation,
  actual)` once it ended, which settles it here and adds the actual spend to the run's
  totals (a budgeted parent's totals are its team's).

A run without a budget has an unlimited ledger: every reservation fits, and settling still
adds up the spend. Cost follows contracts/messages.Usage: once a spend's cost is unknown,
no cost room is left (fails closed).
"""

from dataclasses import dataclass, field

from agentrt.contracts.budget import Allowance, BudgetState
from agentrt.contracts.messages import Usage
from agentrt.contracts.profiles import Budget


@dataclass(frozen=True)
class Reservation:
    """One outstanding claim on the budget; `amount` None on a dimension the budget does
    not limit."""

    id: int
    amount: Allowance


class LedgerError(ValueError):
    """A reservation settled or released twice, or one this ledger never made."""


@dataclass
class Ledger:
    budget: Budget | None = None
    spent: Usage = field(default_factory=Usage.none)
    outstanding: dict[int, Allowance] = field(default_factory=dict)
    next_id: int = 1

    def reserved(self) -> Usage:
        """The sum of the outstanding reservations, as tokens (prompt side) and cost."""
        tokens = sum(a.tokens or 0 for a in self.outstanding.values())
        cost = sum(a.cost_usd or 0.0 for a in self.outstanding.values())
        return Usage(prompt_tokens=tokens, cost_usd=cost)

    def room(self) -> Allowance:
        """What is left to reserve: a limit minus the spend and the reservations (never
        below 0); None on a dimension without a limit."""
        budget, held = self.budget, self.reserved()
        if budget is None:
            return Allowance()
        tokens = None
        if budget.max_tokens is not None:
            tokens = max(0, budget.max_tokens - self.spent.total_tokens - held.total_tokens)
        cost = None
        if budget.max_cost_usd is not None:
            spent_cost = self.spent.cost_usd
            left = 0.0 if spent_cost is None else budget.max_cost_usd - spent_cost
            cost = max(0.0, left - (held.cost_usd or 0.0))
        return Allowance(tokens=tokens, cost_usd=cost)

    def state(self) -> BudgetState:
        """The ledger as the `budget` query shows it."""
        held = self.reserved()
        reserved = Allowance(tokens=held.total_tokens, cost_usd=held.cost_usd)
        return BudgetState(
            budget=self.budget, spent=self.spent, reserved=reserved, room=self.room()
        )

    def reserve(self, amount: Allowance) -> Reservation | None:
        """Claim `amount` if it fits in the room left, else None (nothing changes). An
        amount unbounded (None) on a limited dimension never fits."""
        room = self.room()
        if room.tokens is not None and (amount.tokens is None or amount.tokens > room.tokens):
            return None
        if room.cost_usd is not None and (
            amount.cost_usd is None or amount.cost_usd > room.cost_usd
        ):
            return None
        return self._take(amount)

    def reserve_rest(self) -> Reservation | None:
        """Claim all the room left (a model call's, whose worst case its activity knows),
        or None when a limit has no room at all."""
        room = self.room()
        if room.tokens == 0 or room.cost_usd == 0.0:
            return None
        return self._take(room)

    def settle(self, reservation: Reservation, actual: Usage) -> Usage:
        """End `reservation` with what it actually used; returns the new spend."""
        self._end(reservation)
        self.spent = self.spent + actual
        return self.spent

    def record(self, actual: Usage) -> Usage:
        """Add a spend made without a reservation (a run that does not reserve: no budget,
        or one that began before reservations); returns the new spend."""
        self.spent = self.spent + actual
        return self.spent

    def release(self, reservation: Reservation) -> None:
        """End `reservation` unused (the call was not made)."""
        self._end(reservation)

    def _take(self, amount: Allowance) -> Reservation:
        reservation = Reservation(id=self.next_id, amount=amount)
        self.next_id += 1
        self.outstanding[reservation.id] = amount
        return reservation

    def _end(self, reservation: Reservation) -> None:
        if self.outstanding.pop(reservation.id, None) is None:
            raise LedgerError(f"reservation {reservation.id} is not outstanding")


def spent_all(amount: Allowance) -> Usage:
    """A reservation spent in full: what a call whose spend is unknown is counted as."""
    return Usage(prompt_tokens=amount.tokens or 0, cost_usd=amount.cost_usd or 0.0)
