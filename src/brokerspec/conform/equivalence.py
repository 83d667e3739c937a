"""Declared-equivalent mutants, checked rather than trusted.

Introduction
------------
A mutant that survives the suite leaves the mutation score's denominator when
it is *declared* equivalent: it swaps ``==`` and ``is`` (:data:`IDENTITY_SWAPS`),
or its line carries ``# equivalent mutants: REASON`` (:data:`PRAGMA`), optionally
for named operators only. Each declaration rests on an invariant the code keeps
today, and nothing in the suite would notice the day an edit breaks it. This
module checks each one.

In the mutant's own child process, the mutated impl runs in lockstep with the
spec in *strict* mode over a fixed seeded budget of scripts per profile
(:data:`SCRIPTS` by default), drawn by the domain's state machine from its
narrow alphabet and from its wide one (larger caches and more IDs; more
addresses, queues and consumers; more brokers, destinations and longer TTLs),
which reach the sizes most declarations argue about. After every step it must
give the spec's outcome, show the spec's whole state, private parts included
(round-robin positions, say), and pass its own self-check (``check_valid``).
Before any mutant is checked, the unmutated impl runs the very same scripts
(:func:`baseline_problem`; the scripts depend on the seed and the spec's state
only, never on a subject's replies) and must pass them all, or the check
refuses to judge. So a mutant that parts anywhere differs from the unmutated
impl on something the spec sees, or breaks an invariant the unmutated impl
keeps: its declaration is wrong for it, and the mutant counts as a survivor,
with the shrunk script that shows it. (Running the unmutated impl beside the
mutant in the same process is not sound: once the mutated module is loaded, an
unmutated class that imports a sibling at run time gets the new one.)

A declaration's verdict over a run (:class:`DeclarationVerdict`): ``broken``
(some mutant it covers parted, or brokerspec's state check told it apart),
``held`` (every covered survivor was checked and none parted), ``unchecked``
(covered survivors not checked: ``--equivalents trust``, or outside the
sample), ``unused`` (the suite kills every covered mutant: the declaration is
not needed today) or ``not run`` (no covered mutant was in the plan).

The fast test tier checks the fixed sample :func:`sample_of` picks (each
file's first declaration and every :data:`SAMPLE_EVERY`-th one); the deep
tier (``make mutation``) checks them all. The issue that asked for this:
"The mutation score's equivalent mutants are checked, not declared".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from brokerspec.spec import PROFILES, Profile

from ..check.domains import get_domain
from ..check.lockstep import Divergence, SubjectFactory, format_command
from ..check.runner import run_machine
from .forked import Kill

if TYPE_CHECKING:
    from .mutation import Mutant, Outcome

IDENTITY_SWAPS = ("_Eq_Is", "_NotEq_IsNot", "_Is_Eq", "_IsNot_NotEq")
"""Operators that swap equality and identity: on enum members, small ints and interned names they agree."""
IDENTITY_REASON = "== and is agree on enum members, small ints and interned names, and a SUT's JSON has no identity"
PRAGMA = re.compile(r"# (equivalent mutants|state view)(?: \(([^)]*)\))?: (.+?)(?=\s+# (?:equivalent mutants|state "
                    r"view)\b|$)")
"""Marks a line whose surviving mutants are equivalent: ``# equivalent mutants: REASON``, or
``# equivalent mutants (BitXor, Add): REASON`` for the mutants of those operators only; ``# state view: REASON``
for a line whose mutants change only what ``snapshot()`` shows (bookkeeping no operation reads). A line may
carry several, each for its own operators; the first that covers a mutant is its declaration."""
EQUIVALENT_KIND, STATE_VIEW_KIND, IDENTITY_KIND = "equivalent mutants", "state view", "identity swap"

CHECK, SAMPLE, TRUST = "check", "sample", "trust"
"""What a run does with declared-equivalent survivors: check every one, check the fixed sample, or trust them."""
SCRIPTS = 100
"""Scripts per alphabet (narrow, wide) and profile that a declared-equivalent mutant must pass."""
SEED = 22
SAMPLE_EVERY = 6

HELD, BROKEN, UNCHECKED, UNUSED, NOT_RUN = "held", "broken", "unchecked", "unused", "not run"


class EquivalenceCheckError(RuntimeError):
    """The check could not judge: the unmutated impl itself parted from the spec on a script."""


@dataclass(frozen=True)
class Declaration:
    """One line's claim that its surviving mutants (of ``operators``, or all) are equivalent, and why."""

    file: str
    line: int
    reason: str
    operators: tuple[str, ...] = ()
    kind: str = EQUIVALENT_KIND
    """:data:`EQUIVALENT_KIND` (a pragma) or :data:`IDENTITY_KIND` (the rule for every identity swap), checked on
    outcomes, whole state and self-checks, or :data:`STATE_VIEW_KIND`, checked on outcomes and self-checks only
    (the claim is that only the snapshot differs)."""

    @property
    def label(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}"

    def covers(self, operator: str) -> bool:
        """Whether the claim is about mutants of ``operator`` (a cosmic-ray operator name)."""
        return not self.operators or any(name in operator for name in self.operators)


def line_declarations(file: str, line: int, text: str) -> list[Declaration]:
    """The :data:`PRAGMA` declarations on source line ``text`` (number ``line`` of ``file``), in order."""
    found = []
    for match in PRAGMA.finditer(text):
        only = tuple(name.strip() for name in (match.group(2) or "").split(",") if name.strip())
        found.append(Declaration(file, line, match.group(3).strip(), only, match.group(1)))
    return found


def declaration_for(mutant: Mutant, source: str) -> Declaration | None:
    """What declares ``mutant`` equivalent: an identity swap (a rule for every line) or the first of its line's
    pragmas that covers its operator."""
    if mutant.operator.endswith(IDENTITY_SWAPS):
        return Declaration(mutant.file, mutant.line, IDENTITY_REASON, IDENTITY_SWAPS, IDENTITY_KIND)
    declared = line_declarations(mutant.file, mutant.line, source.splitlines()[mutant.line - 1])
    return next((d for d in declared if d.covers(mutant.operator)), None)


def file_declarations(file: str, source: str) -> list[Declaration]:
    """Every pragma declaration in one file, in line order."""
    return [d for number, text in enumerate(source.splitlines(), start=1) for d in line_declarations(file, number, text)]


def sample_of(declarations: Sequence[Declaration], every: int = SAMPLE_EVERY) -> set[tuple[str, int]]:
    """The fixed sample of declared lines the fast tier checks: each file's first and every ``every``-th one."""
    picked: set[tuple[str, int]] = set()
    files: set[str] = set()
    for index, declaration in enumerate(sorted(declarations, key=lambda d: (d.file, d.line))):
        if declaration.file not in files or index % every == 0:
            picked.add((declaration.file, declaration.line))
            files.add(declaration.file)
    return picked


def profiles_of(domain: str) -> list[Profile]:
    """The profiles a domain's suite runs under (one for a domain without profile options)."""
    return [PROFILES["seed"]] if get_domain(domain).profile_free else list(PROFILES.values())


def script_text(divergence: Divergence) -> str:
    """The script up to where it parted, one numbered command after another, on one line."""
    return "; ".join(f"{n}. {format_command(c)}" for n, c in enumerate(divergence.commands, start=1))


class _OutcomesAndSelfCheck:
    """A subject with its snapshot hidden: the lockstep compares its outcomes and runs its self-check only."""

    def __init__(self, subject: Any) -> None:
        self.subject = subject

    def execute(self, command: Any) -> Any:
        return self.subject.execute(command)

    def check_valid(self) -> None:
        check = getattr(self.subject, "check_valid", None)
        if check is not None:
            check()

    def close(self) -> None:
        close = getattr(self.subject, "close", None)
        if close is not None:
            close()


def _lockstep(domain: str, subject: SubjectFactory, scripts: int, seed: int,
              hide_state: bool = False) -> tuple[str, Divergence] | None:
    """Where ``subject`` first parts from the spec in strict lockstep over the check's scripts, if anywhere
    (``hide_state``: its snapshot is not compared)."""
    if hide_state:
        shown = subject
        subject = lambda profile: _OutcomesAndSelfCheck(shown(profile))  # noqa: E731
    spec = get_domain(domain)
    for profile in profiles_of(domain):
        for wide in (False, True):
            divergence = run_machine(profile, {"impl": subject}, scripts, seed, None, spec, permissive=False,
                                     shrink=True, wide=wide)
            if divergence is not None:
                return f"{profile.name}, {'wide' if wide else 'narrow'} alphabet", divergence
    return None


def equivalence_verdict(domain: str, scripts: int = SCRIPTS, seed: int = SEED, hide_state: bool = False) -> Kill:
    """In a mutant's child, once the mutant is loaded: the (mutated) impl in strict lockstep with the spec
    (``hide_state`` for a :data:`STATE_VIEW_KIND` declaration: outcomes and self-checks only).

    None when it passed every script; else ``("broken", what)`` with the profile, the alphabet, the step,
    what parted and the shrunk script.
    """
    parted = _lockstep(domain, get_domain(domain).layers["impl"], scripts, seed, hide_state)
    if parted is None:
        return None
    where, divergence = parted
    details = "; ".join(divergence.details)
    return BROKEN, f"{where}: step {divergence.step}: {divergence.what} ({details}); script: {script_text(divergence)}"


def baseline_problem(domain: str, scripts: int = SCRIPTS, seed: int = SEED,
                     subject: SubjectFactory | None = None) -> str | None:
    """What the unmutated impl (or ``subject``) gets wrong on the check's scripts (None: it passes them all, so
    the check may judge)."""
    parted = _lockstep(domain, subject or get_domain(domain).layers["impl"], scripts, seed)
    if parted is None:
        return None
    where, divergence = parted
    return f"the unmutated impl parted from the spec ({where}): {divergence.explain()}"


@dataclass
class DeclarationVerdict:
    """What one run found of one declaration."""

    declaration: Declaration
    covered: int = 0
    """Planned mutants the declaration covers."""
    held: int = 0
    unchecked: int = 0
    broken: list[tuple[str, str]] = field(default_factory=list)
    """(mutant label, what told it apart) for every covered mutant that parted."""

    @property
    def verdict(self) -> str:
        """``broken``, ``unchecked``, ``held``, ``unused`` or ``not run`` (see the module's introduction)."""
        if self.broken:
            return BROKEN
        if self.unchecked:
            return UNCHECKED
        if self.held:
            return HELD
        return UNUSED if self.covered else NOT_RUN


def declaration_verdicts(results: Iterable[tuple[Mutant, Outcome]], sources: Mapping[str, str]
                         ) -> list[DeclarationVerdict]:
    """Every declaration in ``sources`` (file name to text) and every identity-swap line that had a covered
    mutant, with what ``results`` found of it, by file and line."""
    verdicts: dict[tuple[str, int, str], DeclarationVerdict] = {}
    for file, source in sources.items():
        for declaration in file_declarations(file, source):
            verdicts[(file, declaration.line, declaration.reason)] = DeclarationVerdict(declaration)
    for mutant, outcome in results:
        text = sources.get(mutant.file)
        claim = declaration_for(mutant, text) if text is not None else None
        if claim is None or (claim.kind == IDENTITY_KIND and not outcome.equivalence):
            continue  # an identity swap the suite kills is no claim of anything
        entry = verdicts.setdefault((mutant.file, mutant.line, claim.reason), DeclarationVerdict(claim))
        entry.covered += 1
        if outcome.equivalence == HELD:
            entry.held += 1
        elif outcome.equivalence == UNCHECKED:
            entry.unchecked += 1
        elif outcome.equivalence == BROKEN:
            entry.broken.append((mutant.label, outcome.detail))
    return sorted(verdicts.values(), key=lambda v: (v.declaration.file, v.declaration.line, v.declaration.reason))


def declaration_lines(verdicts: Iterable[DeclarationVerdict], scripts: int) -> Iterator[str]:
    """Every declaration, readable: where, its verdict and counts, its reason, and each mutant that broke it."""
    for entry in verdicts:
        claim = entry.declaration
        yield (f"{claim.label} [{entry.verdict}] covers {entry.covered} mutants: {entry.held} held over {scripts} "
               f"scripts per alphabet and profile, {entry.unchecked} unchecked, {len(entry.broken)} broken")
        yield f"    {claim.kind}: {claim.reason}" + (f" (operators: {', '.join(claim.operators)})" if claim.operators else "")
        for label, detail in entry.broken:
            yield f"    broken by {label}: {detail}"
