"""The suite's strength: how many generated mutants of ``impl/`` and how many planted bugs it kills.

Introduction
------------
A conformance suite is only as good as the wrong brokers it rejects. This
module measures that the way mutation testing does: cosmic-ray's operators
(the ones that take no configuration, as its own ``init`` uses them) make
every single-point change they can to the fast implementation's source, one
*mutant* each, and the suite runs against every mutant exactly as it runs
against a system under test: the catalogue's cases for the mutant's domain
under every profile, then a fixed fuzz budget (``fuzz_examples`` scripts per
profile, from a fixed seed, no shrinking), outcomes only, with the same
permissive judging ``brokerspec conform`` uses. A mutant is *killed* when a
case fails, a fuzzed script diverges, it raises, or it runs past its
timeout; otherwise it *survived*.

Each mutant runs in a forked child of a process that has already imported
the spec, the catalogue and Hypothesis: the child forgets the ``impl``
modules and imports them again with the one mutated file served from
memory, so nothing is written to disk and a mutant that loops forever is
simply killed. Children run ``jobs`` at a time.

Survivors are examined again and given a reason:

* ``allowed outcome``: ``--strict`` kills it; the mutant picks an outcome
  the spec allows too (load balancing), so the default suite rightly
  passes it. Counted as killed by the suite in strict mode, and shown apart.
* ``hidden state``: the outcomes stayed right within the budget, but
  brokerspec's own lockstep checker, which also compares state, kills it.
* ``equivalent``: nothing distinguishes it, and it is equivalent for a
  stated reason: it swaps ``==`` and ``is`` (which agree on enum members,
  small ints and interned names, and a SUT's JSON has no identity), or its
  line carries the :data:`PRAGMA` comment with the reason, optionally for
  named operators only (a threshold that only decides when a list is
  compacted, say). Equivalent mutants are left
  out of the score's denominator; the raw score keeps them.
* ``gap``: nothing distinguishes it and no reason is known; read it to
  decide whether it is equivalent or a case to add.

Some code no system under test could show wrong, because brokerspec's own
checker is its only reader, is left out by default (``--everything`` puts
it back), and so are changes inside type annotations, which are never
evaluated (every module uses ``from __future__ import annotations``). What
is left out is counted by reason and reported, never dropped silently:

* self-checks: ``validity.py`` files and the ``check_valid`` methods and
  helpers (``problems``, ``_Checker``, ``read_ids``, ``is_durable``);
* state views: ``snapshot.py`` files, ``snapshot`` and ``snapshot_like`` and
  the conversions only they call (``to_ring``, ``to_spec``);
* solver entry points: ``samples.py``, ``lookup.py``, ``choose_from_bits``
  and ``choose_from_bits_on``, which only CrossHair calls.

The planted-bug brokers of every domain run through the same suite; each
must be killed (in strict mode where its bug is an allowed outcome).
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..check.domains import DOMAINS, get_domain
from ..check.lockstep import SubjectFactory
from ..check.runner import run_machine
from .catalogue import Case, all_cases, select
from .equivalence import (
    BROKEN,
    CHECK,
    HELD,
    SAMPLE,
    EQUIVALENT_KIND,
    IDENTITY_KIND,
    SCRIPTS,
    STATE_VIEW_KIND,
    UNCHECKED,
    DeclarationVerdict,
    EquivalenceCheckError,
    baseline_problem,
    declaration_for,
    declaration_lines,
    declaration_verdicts,
    equivalence_verdict,
    file_declarations,
    profiles_of,
    sample_of,
)
from .forked import Kill, Task, Trial, run_forked
from .runner import Verdict, run_case
from .sut import InProcessSut, subject_factory

PACKAGE = "brokerspec.impl"
SELF_CHECK = "self-check"
STATE_VIEW = "state view"
SOLVER = "solver entry point"
ANNOTATION = "type annotation"
LEFT_OUT_FILES = {"validity.py": SELF_CHECK, "snapshot.py": STATE_VIEW, "samples.py": SOLVER, "lookup.py": SOLVER}
"""Files left out by default, by name, with the reason: no system under test could show them wrong."""
LEFT_OUT_DEFINITIONS = {"check_valid": SELF_CHECK, "problems": SELF_CHECK, "_Checker": SELF_CHECK,
                        "read_ids": SELF_CHECK, "is_durable": SELF_CHECK,
                        "snapshot": STATE_VIEW, "snapshot_like": STATE_VIEW, "to_ring": STATE_VIEW,
                        "to_spec": STATE_VIEW,
                        "choose_from_bits": SOLVER, "choose_from_bits_on": SOLVER}
"""Functions and classes left out by default (a mutant anywhere inside them), with the reason."""
FUZZ_EXAMPLES = 20
FUZZ_SEED = 0
TIMEOUT = 60.0

KILLED = ("case", "fuzz", "crash", "timeout")
STRICT = "strict"
SURVIVED = "survived"
EQUIVALENT = "equivalent"

MutantKey = tuple[str, str, int, int]
"""A mutant's file, operator, occurrence and line: its name in a report."""


@dataclass(frozen=True)
class Mutant:
    """One single-point change cosmic-ray makes to one file of ``impl/``."""

    file: str
    """The file, relative to the project (``impl/balancing/broker.py``)."""
    module: str
    domain: str
    operator: str
    occurrence: int
    """Which of the operator's positions in the file (cosmic-ray's occurrence index)."""
    line: int
    column: int
    definition: str
    """The enclosing function or class, or ``<module>``."""

    @property
    def label(self) -> str:
        """``file:line operator #occurrence``, enough to make the mutant again."""
        return f"{self.file}:{self.line} {self.operator.removeprefix('core/')} #{self.occurrence}"

    @property
    def key(self) -> MutantKey:
        """What names this mutant across runs of the same source (see :func:`survivors_of`)."""
        return self.file, self.operator, self.occurrence, self.line


@dataclass(frozen=True)
class Outcome:
    """What the suite made of one mutant or planted bug."""

    fate: str
    """One of :data:`KILLED`, ``strict`` (killed only by ``--strict``), ``survived`` or ``equivalent``
    (survived, and equivalent for a reason its detail gives)."""
    detail: str = ""
    """The case, divergence, exception or timeout that killed it; for a survivor, its reason."""
    seconds: float = 0.0
    before: str = ""
    after: str = ""
    equivalence: str = ""
    """For a mutant a declaration covers that survived the suite: ``held``, ``broken`` or ``unchecked``
    (:mod:`.equivalence`); empty otherwise."""

    @property
    def killed(self) -> bool:
        """Killed by the suite, in default or strict mode."""
        return self.fate not in (SURVIVED, EQUIVALENT)


@dataclass(frozen=True)
class SuiteSettings:
    """The fixed budget: how much fuzzing follows the catalogue, from which seed; which cases."""

    fuzz_examples: int = FUZZ_EXAMPLES
    seed: int = FUZZ_SEED
    case_pattern: str | None = None
    timeout: float = TIMEOUT
    equivalents: str = CHECK
    """``check`` every declared-equivalent survivor, the fast tier's fixed ``sample``, or ``trust`` them."""
    equivalence_scripts: int = SCRIPTS
    """Scripts per alphabet and profile a declared-equivalent survivor must pass (:mod:`.equivalence`)."""


@dataclass
class MutationReport:
    """Everything one run measured."""

    settings: SuiteSettings
    mutants: list[tuple[Mutant, Outcome]] = field(default_factory=list)
    planted: list[tuple[str, str, Outcome]] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    """Mutants not run, by reason (see :data:`LEFT_OUT_FILES`, :data:`LEFT_OUT_DEFINITIONS`)."""
    seconds: float = 0.0
    declarations: list[DeclarationVerdict] = field(default_factory=list)
    """Every equivalence declaration of the files run, with its verdict (:mod:`.equivalence`)."""

    def count(self, *fates: str) -> int:
        """How many mutants met one of ``fates``."""
        return sum(1 for _, outcome in self.mutants if outcome.fate in fates)

    @property
    def score(self) -> float:
        """Killed (default or strict mode) over the mutants run that are not equivalent, in percent."""
        total = len(self.mutants) - self.count(EQUIVALENT)
        return 100.0 * self.count(*KILLED, STRICT) / total if total else 100.0

    @property
    def default_score(self) -> float:
        """Killed in default (permissive) mode alone over the mutants that are not equivalent, in percent."""
        total = len(self.mutants) - self.count(EQUIVALENT)
        return 100.0 * self.count(*KILLED) / total if total else 100.0

    @property
    def checked_score(self) -> float:
        """Like :attr:`score`, but only equivalents whose check held leave the denominator: declared ones
        not checked count as survivors."""
        total = len(self.mutants) - sum(1 for _, o in self.mutants if o.fate == EQUIVALENT and o.equivalence == HELD)
        return 100.0 * self.count(*KILLED, STRICT) / total if total else 100.0

    @property
    def raw_score(self) -> float:
        """Killed (default or strict mode) over every mutant run, equivalent ones included, in percent."""
        total = len(self.mutants)
        return 100.0 * self.count(*KILLED, STRICT) / total if total else 100.0

    @property
    def planted_survivors(self) -> list[str]:
        """The planted bugs the suite did not kill."""
        return [name for _, name, outcome in self.planted if not outcome.killed]

    def survivors(self, fate: str = SURVIVED) -> list[tuple[Mutant, Outcome]]:
        """The surviving mutants (or the equivalent ones), by file and line."""
        return sorted(((m, o) for m, o in self.mutants if o.fate == fate), key=lambda p: (p[0].file, p[0].line))

    def reasons(self, fate: str = SURVIVED) -> Counter[str]:
        """How many survivors (or equivalent mutants) have each reason."""
        return Counter(reason_of(o) for _, o in self.survivors(fate))

    def by_file(self) -> list[tuple[str, int, int, int, int, int]]:
        """Per file: mutants, killed in default mode, killed only in strict mode, equivalent, survived."""
        column = {STRICT: 2, EQUIVALENT: 3, SURVIVED: 4}
        rows: dict[str, list[int]] = {}
        for mutant, outcome in self.mutants:
            row = rows.setdefault(mutant.file, [0, 0, 0, 0, 0])
            row[0] += 1
            row[column.get(outcome.fate, 1)] += 1
        return [(name, *row) for name, row in sorted(rows.items())]  # type: ignore[misc]

    def to_json(self) -> dict[str, Any]:
        """The report as plain data."""
        return {
            "score": round(self.score, 2),
            "default_score": round(self.default_score, 2),
            "checked_score": round(self.checked_score, 2),
            "raw_score": round(self.raw_score, 2),
            "mutants": len(self.mutants),
            "fates": {fate: self.count(fate) for fate in (*KILLED, STRICT, EQUIVALENT, SURVIVED)},
            "survivor_reasons": dict(self.reasons()),
            "equivalent_reasons": dict(self.reasons(EQUIVALENT)),
            "left_out": self.left_out,
            "settings": asdict(self.settings),
            "seconds": round(self.seconds, 1),
            "planted": [{"domain": d, "bug": n, **asdict(o)} for d, n, o in self.planted],
            "declarations": [{**asdict(v.declaration), "verdict": v.verdict, "covered": v.covered, "held": v.held,
                              "unchecked": v.unchecked, "broken": [list(b) for b in v.broken]}
                             for v in self.declarations],
            "results": [{**asdict(m), **asdict(o)} for m, o in self.mutants],
        }


def reason_of(outcome: Outcome) -> str:
    """A survivor's reason, the part of its detail before the colon (for an equivalent mutant, the part
    after ``equivalent:`` and before the next colon)."""
    detail = outcome.detail.removeprefix(f"{EQUIVALENT}: ")
    return detail.split(":", 1)[0]


# --- the mutants -------------------------------------------------------------------------------


def impl_root() -> Path:
    """The directory of the installed ``brokerspec.impl`` package."""
    import brokerspec.impl

    return Path(brokerspec.impl.__file__).parent


def impl_files(root: Path, only: Sequence[str] = (), domains: Sequence[str] = ()) -> list[tuple[str, Path]]:
    """The files to mutate, as (project-relative name, path): ``only`` (each must exist), else every file
    of ``domains`` (default every domain)."""
    named = [(f"impl/{p.relative_to(root).as_posix()}", p) for p in sorted(root.rglob("*.py"))]
    if only:
        known = dict(named)
        missing = [name for name in only if name not in known]
        if missing:
            raise ValueError(f"not a file of impl/: {', '.join(missing)}; files: {', '.join(known)}")
        return [(name, known[name]) for name in only]
    return [(n, p) for n, p in named if not domains or n.split("/")[1] in domains]


def left_out_reason(mutant: Mutant) -> str | None:
    """Why ``mutant`` is not run by default, or None when it is."""
    reason = LEFT_OUT_FILES.get(mutant.file.rsplit("/", 1)[-1])
    if reason is not None:
        return reason
    for part in mutant.definition.split("."):
        if part in LEFT_OUT_DEFINITIONS:
            return LEFT_OUT_DEFINITIONS[part]
    return None


def operators() -> list[tuple[str, Any]]:
    """cosmic-ray's operators that take no arguments, by name, as its own ``init`` instantiates them."""
    from cosmic_ray.plugins import get_operator, operator_names

    found = []
    for name in sorted(operator_names()):
        kind = get_operator(name)
        if not kind.arguments():
            found.append((name, kind()))
    return found


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The (start, end) positions of every type annotation in ``source``."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        notes: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            notes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        for note in notes:
            if note is not None and note.end_lineno is not None and note.end_col_offset is not None:
                spans.append(((note.lineno, note.col_offset), (note.end_lineno, note.end_col_offset)))
    return spans


def _definition(node: Any) -> str:
    names = []
    while node is not None:
        if node.type in ("funcdef", "classdef"):
            names.append(node.name.value)
        node = node.parent
    return ".".join(reversed(names)) or "<module>"


def file_mutants(name: str, source: str, ops: Sequence[tuple[str, Any]]) -> tuple[list[Mutant], int]:
    """Every mutant of one file, and how many positions fell inside annotations (left out)."""
    from cosmic_ray.ast import ast_nodes, get_ast

    module = PACKAGE + "." + name.removeprefix("impl/").removesuffix(".py").replace("/", ".")
    module = module.removesuffix(".__init__")
    parts = name.split("/")
    domain = parts[1] if len(parts) > 2 else ""
    spans = annotation_spans(source)
    nodes = list(ast_nodes(get_ast(source)))
    mutants: list[Mutant] = []
    in_notes = 0
    for op_name, op in ops:
        occurrence = 0
        for node in nodes:
            for start, _end in op.mutation_positions(node):
                if any(a <= start < b for a, b in spans):
                    in_notes += 1
                else:
                    mutants.append(Mutant(name, module, domain, op_name, occurrence, start[0], start[1],
                                          _definition(node)))
                occurrence += 1
    return mutants, in_notes


def thin(mutants: list[Mutant], sample: int | None) -> list[Mutant]:
    """Every k-th mutant, so that about ``sample`` remain (all of them when ``sample`` is None)."""
    if sample is None or sample >= len(mutants):
        return mutants
    step = len(mutants) / max(sample, 1)
    return [mutants[int(i * step)] for i in range(sample)]


def survivors_of(report: Path) -> set[MutantKey]:
    """The survivors of an earlier run's ``mutation-score.json``, as (file, operator, occurrence, line).

    Raises ValueError naming the file when it cannot be read as such a report.
    """
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
        return {(r["file"], r["operator"], int(r["occurrence"]), int(r["line"]))
                for r in data["results"] if r["fate"] == SURVIVED}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{report}: not a mutation-score.json report ({type(error).__name__}: {error})") from None


def only_these(the_plan: Plan, keys: set[MutantKey]) -> Plan:
    """``the_plan`` cut down to the mutants in ``keys`` (see :func:`survivors_of`)."""
    kept = [m for m in the_plan.mutants if m.key in keys]
    files = {m.file for m in kept}
    return Plan(kept, {k: v for k, v in the_plan.sources.items() if k in files}, the_plan.left_out)


def mutated_source(source: str, mutant: Mutant) -> str:
    """The file's text with ``mutant`` applied."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    mutated = mutate_code(source, get_operator(mutant.operator)(), mutant.occurrence)
    if mutated is None:
        raise RuntimeError(f"{mutant.label}: cosmic-ray applied no mutation")
    return str(mutated)


# --- one trial, in a child process -------------------------------------------------------------


class _MemoryLoader(importlib.abc.Loader):
    """Runs a module from source text held in memory."""

    def __init__(self, source: str, path: str) -> None:
        self.source = source
        self.path = path

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(compile(self.source, self.path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102


class _MutantFinder(importlib.abc.MetaPathFinder):
    """Serves one module's mutated source; every other module is found as usual."""

    def __init__(self, module: str, source: str, path: Path) -> None:
        self.module = module
        self.source = source
        self.path = path

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        package = [str(self.path.parent)] if self.path.name == "__init__.py" else None
        return importlib.util.spec_from_file_location(fullname, self.path,
                                                      loader=_MemoryLoader(self.source, str(self.path)),
                                                      submodule_search_locations=package)


def load_mutant(module: str, source: str, path: Path) -> None:
    """Forget every ``impl`` module and serve ``module`` from ``source`` from now on (in this process)."""
    for name in list(sys.modules):
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            del sys.modules[name]
    sys.meta_path.insert(0, _MutantFinder(module, source, path))


def suite_verdict(layer: str, domain: str, cases: Sequence[Case], settings: SuiteSettings,
                  strict: bool = False) -> Kill:
    """Run the suite (the domain's cases under every profile, then the fuzz budget) against ``layer``.

    Returns how it was killed (``case`` or ``fuzz``) and what showed it, or None when it passed.
    An exception the layer raises propagates (the caller counts it as a crash).
    """
    sut = InProcessSut(layer)
    for profile in profiles_of(domain):
        for case in select(cases, profile, (domain,), settings.case_pattern):
            result = run_case(sut, case, profile, strict)
            if result.verdict is not Verdict.PASSED:
                return "case", f"{case.name} ({profile.name})"
    return _fuzz_verdict({"sut": subject_factory(sut, domain)}, domain, settings,
                         permissive=get_domain(domain).judge is not None and not strict)


def _fuzz_verdict(subjects: dict[str, SubjectFactory], domain: str, settings: SuiteSettings,
                  permissive: bool) -> Kill:
    if settings.fuzz_examples <= 0:
        return None
    for profile in profiles_of(domain):
        divergence = run_machine(profile, subjects, settings.fuzz_examples, settings.seed, None,
                                 get_domain(domain), permissive, shrink=False)
        if divergence is not None:
            return "fuzz", f"step {divergence.step} ({profile.name}): {divergence.what}"
    return None


def _state_verdict(domain: str, settings: SuiteSettings) -> Kill:
    """brokerspec's own lockstep check of the (mutated) impl: outcomes, state and self-checks."""
    factory = get_domain(domain).layers["impl"]
    budget = SuiteSettings(max(settings.fuzz_examples, FUZZ_EXAMPLES), settings.seed)
    return _fuzz_verdict({"impl": factory}, domain, budget, get_domain(domain).judge is not None)


def _quietly(work: Callable[[], Kill]) -> Kill:
    """Run ``work`` with standard output and error sent nowhere (Hypothesis reports what it finds);
    an exception becomes a ``crash`` verdict."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        return work()
    except Exception as error:  # the mutant raised: the suite saw a broker fail
        text = str(error).splitlines()[0] if str(error) else ""
        return "crash", f"{type(error).__name__}: {text}"[:300]


def mutant_trial(mutant: Mutant, source: str, path: Path, cases: Sequence[Case], settings: SuiteSettings,
                 mode: str) -> Trial:
    """In a child process: load ``mutant`` and run the suite (``mode`` suite), the strict suite (``strict``),
    brokerspec's own state-comparing check (``state``) or the check of its equivalence declaration
    (``equivalence``) against it; the verdict and the changed line."""
    mutated = mutated_source(source, mutant)
    before, after = changed_line(source, mutated, mutant.line)
    load_mutant(mutant.module, mutated, path)
    if mode == "equivalence":
        claim = declaration_for(mutant, source)
        hide = claim is not None and claim.kind == STATE_VIEW_KIND
        return _quietly(lambda: equivalence_verdict(mutant.domain, settings.equivalence_scripts, settings.seed,
                                                    hide)), before, after
    if mode == "state":
        return _quietly(lambda: _state_verdict(mutant.domain, settings)), before, after
    return _quietly(lambda: suite_verdict("impl", mutant.domain, cases, settings, strict=mode == "strict")), before, after


def changed_line(source: str, mutated: str, line: int) -> tuple[str, str]:
    """The first line that differs, before and after."""
    after = mutated.splitlines()
    before = source.splitlines()
    for old, new in zip(before, after):
        if old != new:
            return old.strip(), new.strip()
    return before[line - 1].strip(), "(a line removed)"


# --- the whole measurement ----------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What one run will do: the mutants, the files behind them and what was left out, by reason."""

    mutants: list[Mutant]
    sources: dict[str, tuple[str, Path]]
    left_out: dict[str, int]


def plan(only: Sequence[str] = (), domains: Sequence[str] = (), operator_filter: Sequence[str] = (),
         sample: int | None = None, everything: bool = False) -> Plan:
    """Enumerate the mutants to run (with ``everything``, also those left out by default)."""
    ops = [(n, o) for n, o in operators() if not operator_filter or any(f in n for f in operator_filter)]
    if not ops:
        raise ValueError(f"no cosmic-ray operator matches {', '.join(operator_filter)}")
    sources: dict[str, tuple[str, Path]] = {}
    mutants: list[Mutant] = []
    left_out: Counter[str] = Counter()
    for name, path in impl_files(impl_root(), only, domains):
        source = path.read_text(encoding="utf-8")
        found, notes = file_mutants(name, source, ops)
        left_out[ANNOTATION] += notes
        kept = [m for m in found if m.domain in DOMAINS and (everything or left_out_reason(m) is None)]
        left_out.update(reason for m in found if not everything and (reason := left_out_reason(m)) is not None)
        if kept:
            mutants.extend(kept)
            sources[name] = (source, path)
    return Plan(thin(mutants, sample), sources, {k: v for k, v in left_out.items() if v})


CLAIM_LABELS = {EQUIVALENT_KIND: "declared", STATE_VIEW_KIND: "state view", IDENTITY_KIND: "identity swap"}
"""How an equivalent mutant's reason names the kind of claim that covers it."""


def survivor_fate(mutant: Mutant, source: str, state: Kill, equivalence: Kill | str = UNCHECKED
                  ) -> tuple[str, str, str]:
    """A survivor's fate, reason and equivalence verdict: hidden state if brokerspec's state check kills it,
    else equivalent if a declaration covers it (an identity swap, or its line's :data:`.equivalence.PRAGMA`)
    and its check (``equivalence``: None when it held, the kill when it parted, :data:`UNCHECKED` when not run)
    did not break it, else a gap. A declaration that a state check or its own check breaks is named as wrong."""
    declared = declaration_for(mutant, source)
    if state is not None and declared is not None and declared.kind == STATE_VIEW_KIND:
        state = None  # the claim is that only the state view differs: its own check judges it
    if state is not None:
        return SURVIVED, (f"hidden state: brokerspec's state-comparing check kills it ({state[0]}: {state[1]})"
                          + (f"; the declaration '{declared.reason}' is wrong" if declared is not None else "")
                          ), BROKEN if declared is not None else ""
    if declared is None:
        return SURVIVED, "gap: no case or fuzzed script tells it apart from the spec", ""
    kind = CLAIM_LABELS[declared.kind]
    reason = declared.reason
    if equivalence == UNCHECKED:
        return EQUIVALENT, f"{EQUIVALENT}: {kind}: {reason} (not checked)", UNCHECKED
    if equivalence is None:
        return EQUIVALENT, f"{EQUIVALENT}: {kind}: {reason} (held over its check)", HELD
    assert not isinstance(equivalence, str)
    if equivalence[0] in (BROKEN, "timeout"):
        return SURVIVED, f"broken declaration: '{reason}' is wrong: {equivalence[1]}", BROKEN
    return EQUIVALENT, f"{EQUIVALENT}: {kind}: {reason} (the check could not run: {equivalence[1]})", UNCHECKED


def baseline_problems(cases: Sequence[Case], settings: SuiteSettings, domains: Sequence[str]) -> list[str]:
    """The suite must pass the unmutated impl, or no mutant result means anything: what failed, if anything."""
    results: dict[int, Trial] = {}
    run_forked([_layer_task("impl", d, cases, settings, False) for d in domains], len(domains),
               settings.timeout * 4, lambda i, trial, s: results.__setitem__(i, trial))
    return [f"{domain}: {results[i][0]}" for i, domain in enumerate(domains) if results[i][0] is not None]


def _layer_task(layer: str, domain: str, cases: Sequence[Case], settings: SuiteSettings, strict: bool) -> Task:
    return lambda: (_quietly(lambda: suite_verdict(layer, domain, cases, settings, strict)), "", "")


class _Phase:
    """Collects one phase's trials by index and reports progress."""

    def __init__(self, name: str, total: int, progress: Callable[[str, int, int], None] | None) -> None:
        self.name = name
        self.total = total
        self.progress = progress
        self.trials: dict[int, tuple[Trial, float]] = {}

    def __call__(self, index: int, trial: Trial, seconds: float) -> None:
        self.trials[index] = (trial, seconds)
        if self.progress is not None:
            self.progress(self.name, len(self.trials), self.total)

    def verdict(self, index: int) -> Kill:
        """The verdict of trial ``index``."""
        return self.trials[index][0][0]


def _rerun(indices: list[int], task: Callable[[int], Task], name: str, jobs: int, timeout: float,
           progress: Callable[[str, int, int], None] | None) -> dict[int, Kill]:
    """Run ``task(i)`` for each of ``indices`` as one phase; each index's verdict."""
    phase = _Phase(name, len(indices), progress)
    run_forked([task(i) for i in indices], jobs, timeout, phase)
    return {i: phase.verdict(k) for k, i in enumerate(indices)}


def _strict_only(how: Kill) -> str:
    assert how is not None
    return f"allowed outcome: --strict kills it ({how[0]}: {how[1]})"


def measure(the_plan: Plan, settings: SuiteSettings, jobs: int, planted: bool = True,
            progress: Callable[[str, int, int], None] | None = None) -> MutationReport:
    """Run the suite against every planned mutant (and every planted bug); classify the survivors."""
    started = time.monotonic()
    cases = all_cases()
    report = MutationReport(settings, left_out=the_plan.left_out)
    if planted:
        report.planted = _run_planted(cases, settings, jobs, progress)
    mutants = the_plan.mutants

    def task(mutant: Mutant, mode: str) -> Task:
        source, path = the_plan.sources[mutant.file]
        return lambda: mutant_trial(mutant, source, path, cases, settings, mode)

    first = _Phase("mutants", len(mutants), progress)
    run_forked([task(m, "suite") for m in mutants], jobs, settings.timeout, first)
    alive = [i for i in range(len(mutants)) if first.verdict(i) is None]
    balancing = [i for i in alive if get_domain(mutants[i].domain).judge is not None]
    strict_of = _rerun(balancing, lambda i: task(mutants[i], "strict"), "survivors, strict", jobs,
                       settings.timeout, progress)
    still = [i for i in alive if strict_of.get(i) is None]
    state_of = _rerun(still, lambda i: task(mutants[i], "state"), "survivors, state check", jobs,
                      settings.timeout * 4, progress)
    sources = {name: text for name, (text, _) in the_plan.sources.items()}
    wanted = _to_check(mutants, [i for i in still if state_of.get(i) is None], sources, settings.equivalents)
    _equivalence_baseline(sorted({mutants[i].domain for i in wanted}), settings, jobs)
    equivalence_of = _rerun(wanted, lambda i: task(mutants[i], "equivalence"), "declared equivalents, checked",
                            jobs, settings.timeout * 4, progress)
    for index, mutant in enumerate(mutants):
        (verdict, before, after), seconds = first.trials[index]
        if not before:
            before, after = changed_line(the_plan.sources[mutant.file][0],
                                         mutated_source(the_plan.sources[mutant.file][0], mutant), mutant.line)
        how = strict_of.get(index)
        if verdict is not None:
            outcome = Outcome(verdict[0], verdict[1], seconds, before, after)
        elif how is not None:
            outcome = Outcome(STRICT, _strict_only(how), seconds, before, after)
        else:
            checked = equivalence_of[index] if index in equivalence_of else UNCHECKED
            fate, why, equivalence = survivor_fate(mutant, sources[mutant.file], state_of.get(index), checked)
            outcome = Outcome(fate, why, seconds, before, after, equivalence)
        report.mutants.append((mutant, outcome))
    report.declarations = declaration_verdicts(report.mutants, sources)
    report.seconds = time.monotonic() - started
    return report


def _equivalence_baseline(domains: list[str], settings: SuiteSettings, jobs: int) -> None:
    """Raise :class:`EquivalenceCheckError` unless the unmutated impl passes the equivalence check's scripts."""
    results: dict[int, Trial] = {}

    def task(domain: str) -> Task:
        def baseline() -> Trial:
            problem = baseline_problem(domain, settings.equivalence_scripts, settings.seed)
            return (None if problem is None else ("baseline", problem)), "", ""
        return baseline

    run_forked([task(d) for d in domains], jobs, settings.timeout * 8, lambda i, t, s: results.__setitem__(i, t))
    problems = [kill[1] for i in range(len(domains)) if (kill := results[i][0]) is not None]
    if problems:
        raise EquivalenceCheckError("the equivalence check cannot judge: " + "\n".join(problems))


def _to_check(mutants: Sequence[Mutant], survivors: Sequence[int], sources: dict[str, str], how: str) -> list[int]:
    """The survivors whose equivalence declaration a run checks: every declared one (``check``), those on the
    fixed sample of declared lines (``sample``), or none (``trust``)."""
    declared = [i for i in survivors if declaration_for(mutants[i], sources[mutants[i].file]) is not None]
    if how == CHECK:
        return declared
    if how != SAMPLE:
        return []
    lines = sample_of([d for name, text in sources.items() for d in file_declarations(name, text)])
    return [i for i in declared if (mutants[i].file, mutants[i].line) in lines]


def _run_planted(cases: Sequence[Case], settings: SuiteSettings, jobs: int,
                 progress: Callable[[str, int, int], None] | None) -> list[tuple[str, str, Outcome]]:
    from ..planted.registry import all_planted

    bugs = [(domain, bug.name) for domain, bug in all_planted()]
    first = _Phase("planted bugs", len(bugs), progress)
    run_forked([_layer_task(f"planted:{n}", d, cases, settings, False) for d, n in bugs], jobs,
               settings.timeout * 4, first)
    passed = [i for i in range(len(bugs)) if first.verdict(i) is None]
    strict_of = _rerun(passed, lambda i: _layer_task(f"planted:{bugs[i][1]}", bugs[i][0], cases, settings, True),
                       "planted bugs, strict", jobs, settings.timeout * 4, progress)
    found: list[tuple[str, str, Outcome]] = []
    for index, (domain, name) in enumerate(bugs):
        verdict, seconds = first.verdict(index), first.trials[index][1]
        how = strict_of.get(index)
        if verdict is not None:
            outcome = Outcome(verdict[0], verdict[1], seconds)
        elif how is not None:
            outcome = Outcome(STRICT, _strict_only(how), seconds)
        else:
            outcome = Outcome(SURVIVED, "gap: neither the suite nor --strict tells it apart", seconds)
        found.append((domain, name, outcome))
    return found


def write_report(report: MutationReport, out_dir: Path) -> tuple[Path, Path]:
    """Write ``mutation-score.json``, ``survivors.txt`` (every survivor, readable) and ``declarations.txt``
    (every equivalence declaration with its verdict) into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data = out_dir / "mutation-score.json"
    data.write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    text = out_dir / "survivors.txt"
    text.write_text("".join(f"{line}\n" for line in survivor_lines(report)), encoding="utf-8")
    lines = declaration_lines(report.declarations, report.settings.equivalence_scripts)
    (out_dir / "declarations.txt").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return data, text


def survivor_lines(report: MutationReport) -> Iterator[str]:
    """Every survivor, then every equivalent mutant, as three lines each: where and which operator, the
    change, the reason."""
    for mutant, outcome in report.survivors() + report.survivors(EQUIVALENT):
        yield f"{mutant.label} in {mutant.definition}"
        yield f"    {outcome.before}  ->  {outcome.after}"
        yield f"    {outcome.detail}"
