"""The study a config describes (Study, built by themesim.config.prepare) and, one concern
per module, the parts of it that prepare checks and works out: names, theme sets, groups of
sets, methods. Nothing here imports themesim.config."""

from __future__ import annotations

from dataclasses import dataclass, field

from themesim.comparisons import pair_sets
from themesim.kinds import get as get_kind
from themesim.study.groups import generators_of


@dataclass
class Study:
    name: str
    description: str
    reference: str
    sets: dict[str, str]  # set name -> theme file, reference first
    transcripts: list[str]
    template: str
    op: str
    sweep: dict
    methods: dict[str, dict]  # active methods only, defaults applied, without thresholds
    thresholds: dict[str, list]  # method -> its configured thresholds (numbers, "calibrated")
    metrics: dict  # settings of the families beyond coverage
    pairs: list[tuple[str, str]] = field(default_factory=list)  # cross-set comparisons
    generated: dict[str, int] = field(default_factory=dict)  # LLM-generated run -> its seed
    generate: dict = field(default_factory=dict)  # settings of the generation (GENERATE_KEYS)
    segments: dict[str, str] = field(default_factory=dict)  # set -> coded file or .qdpx
    levels: dict[str, str] = field(default_factory=dict)  # .qdpx set -> top|leaf|all
    users: dict[str, str] = field(default_factory=dict)  # .qdpx set -> its user (name or guid)
    grounding: dict = field(default_factory=dict)  # `grounding:`, defaults filled in
    run_groups: dict[str, list[str]] = field(default_factory=dict)  # group -> its runs (>= 2)
    ceiling: dict = field(default_factory=dict)  # `ceiling:` (paraphrase ceiling), defaults in
    # .qdpx theme sets whose sources are the transcripts (the config lists none)
    transcript_projects: list[str] = field(default_factory=list)
    # method -> the pairs it runs, for a method whose `comparisons:` restricts them
    restricted: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # human sets of the same data, the reference first; `equivalence:` with defaults
    reference_group: list[str] = field(default_factory=list)
    equivalence: dict = field(default_factory=dict)
    # `verdict:`: the primary comparison (method, route, threshold), checked; None: default
    verdict: dict = field(default_factory=lambda: {"primary": None})
    # lines for the log at parse time (e.g. two sets whose files are one file's copies)
    notes: list[str] = field(default_factory=list)

    def pairs_for(self, method: str) -> list[tuple[str, str]]:
        """The comparisons a method runs: its `comparisons:`, else every one of the study."""
        return self.restricted.get(method, self.pairs)

    def sets_for(self, method: str) -> list[str]:
        """The sets of a method's comparisons, in set order (its per-set work)."""
        if method not in self.restricted:  # every set is in a comparison of the study
            return list(self.sets)
        return pair_sets(self.sets, self.restricted[method])

    @property
    def within(self) -> list[tuple[str, str]]:
        return [(s, s) for s in self.sets]

    def method_pairs(self, method: str) -> list[tuple[str, str]]:
        """The pairs a method writes similarity files for."""
        spec = self.methods[method]
        within = [(s, s) for s in self.sets_for(method)]
        return get_kind(spec["kind"]).study_pairs(spec, self.pairs_for(method), within)

    def methods_with(self, capability: str) -> list[str]:
        """Active methods whose kind has that capability (a flag of themesim.kinds.Kind)."""
        return [m for m, s in self.methods.items() if getattr(get_kind(s["kind"]), capability)]

    @property
    def runs(self) -> list[str]:
        """Every set in a run group, once, in group order: the sets run consistency reads."""
        return list(dict.fromkeys(s for group in self.run_groups.values() for s in group))

    @property
    def analysts(self) -> list[str]:
        """The verdicts' analysts: the reference group, or the reference alone."""
        return list(self.reference_group) or [self.reference]

    @property
    def generators(self) -> dict[str, list[str]]:
        """Each run group, and each set in no group, as one generator of the verdicts."""
        return generators_of(list(self.sets), self.analysts, self.run_groups)

    @property
    def b_sets(self) -> list[str]:
        """Sets that appear as B in a comparison (the word-salad nulls are made of these)."""
        return list(dict.fromkeys(b for _, b in self.pairs))

    def embeddings_of(self, method: str) -> str:
        """The method whose embedding files a method reads (itself, or an abtt's base)."""
        spec = self.methods[method]
        return get_kind(spec["kind"]).embeddings_of(method, spec)
