"""One job of a workflow rule as one object: what its stage's binder (themesim.inputs) built
from the study, with the outputs and threads Snakemake gave it. Its script hands it to the
step (steps.runner.run_job); nothing here imports Snakemake."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Job:
    """input: name -> path, [paths] or {key: path} (a set, a pair: what the step looks up);
    params: the settings the step reads beside its files, so a change reruns the job;
    output: name -> path or [paths], the rule's named outputs; ancient: input names that
    Snakemake reads as ancient() (an edit of the file reruns no job)."""

    input: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    output: dict = field(default_factory=dict)
    threads: int = 1
    ancient: tuple = ()

    def one(self, name: str):
        """The file of an optional input, given as [] or [path]; None when absent."""
        files = self.input.get(name)
        return files[0] if files else None

    def files(self) -> dict:
        """The inputs as the rule's `input:` lists them: a {key: path} entry by its paths
        (each once)."""
        return {k: v if isinstance(v, str) else _paths(v) for k, v in self.input.items()}

    def param(self) -> dict:
        """The rule's `job` param: plain data, whose repr Snakemake records and compares
        (a dataclass would not be compared: Snakemake skips params it cannot repr)."""
        return {"input": self.input, "params": self.params}

    @classmethod
    def of(cls, snakemake) -> Job:
        """The job a workflow script runs: its `job` param and Snakemake's outputs, threads."""
        given = snakemake.params.job
        output = {
            name: str(v) if isinstance(v, str) else [str(x) for x in v]
            for name, v in snakemake.output.items()
        }
        return cls(given["input"], given["params"], output, int(snakemake.threads))


def _paths(value) -> list[str]:
    """The paths in a list or a (nested) mapping's values, each once, in order."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value
    return list(dict.fromkeys(p for item in items for p in _paths(item)))
