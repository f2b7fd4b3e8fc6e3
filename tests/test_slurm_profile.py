"""The SLURM profile: every job of a study carries the resources it needs.

No cluster is needed: the dry run uses the profile's own settings with the local executor,
and the resources Snakemake resolves per job are the ones the plugin turns into sbatch flags.
tests/test_slurm_cluster.py runs the study on a real (local) cluster.
"""

import re

import yaml
from helpers import REPO, make_study, snakemake, write_config

PROFILE = REPO / "profiles" / "slurm"


def jobs(dry_run: str) -> list[dict]:
    """rule, wildcards and resources of each job block that `snakemake -n` prints."""
    out = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if not m:
            continue
        job = {"rule": m.group(1), "wildcards": {}, "resources": {}}
        for key in ("wildcards", "resources"):
            found = re.search(rf"^\s+{key}: (.*)$", block, re.MULTILINE)
            if found:
                pairs = (kv.split("=", 1) for kv in found.group(1).split(", "))
                job[key] = {k: v for k, v in pairs}
        threads = re.search(r"^\s+threads: (\d+)$", block, re.MULTILINE)
        job["threads"] = int(threads.group(1)) if threads else 1
        out.append(job)
    return out


def test_profile_yaml_is_the_file_snakemake_reads():
    config = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert yaml.safe_load((PROFILE / "profile.yaml").read_text()) == config
    assert config["executor"] == "slurm"


def test_every_job_carries_its_resources(tmp_path):
    root = make_study(tmp_path / "study")
    methods = {
        "minilm": {"kind": "sentence_transformer", "thresholds": [0.5]},
        "st5xxl": {
            "kind": "sentence_transformer",
            "path": "models/sentence-t5-xxl",
            "device": "cuda",
            "dtype": "float16",
            "thresholds": [0.81],
        },
        "tfidf": {"kind": "tfidf", "thresholds": [0.2]},
    }
    write_config(root, [0.5], methods=methods)
    # The folder is checked when the workflow is parsed, never loaded in a dry run.
    model_dir = root / "models" / "sentence-t5-xxl"
    model_dir.mkdir(parents=True)
    (model_dir / "modules.json").write_text("[]")
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    del profile["executor"]  # the local executor instead of the plugin
    profile["cores"] = 2
    profile["default-resources"] |= {"slurm_account": "acct", "slurm_partition": "cpu"}
    local = tmp_path / "profile"
    local.mkdir()
    (local / "config.yaml").write_text(yaml.safe_dump(profile))

    # Snakemake also applies the workflow profile profiles/default; it must not drop these.
    found = jobs(snakemake(root, "--dry-run", "--profile", str(local)).stdout)
    rules = {j["rule"] for j in found}
    assert {"embed", "similarity_embedding", "metrics", "summary_report"} <= rules
    runtimes = {r: v["runtime"] for r, v in profile["set-resources"].items()}
    for job in found:
        if job["rule"] == "all":
            continue
        res, wc = job["resources"], job["wildcards"]
        assert res["slurm_account"] == "acct" and res["slurm_partition"] == "cpu", job
        assert int(res["runtime"]) == runtimes.get(job["rule"], 30), job
        assert int(res["mem_mb"]) >= 2000, job
        if job["rule"].startswith("embed"):
            gpu = wc["method"] == "st5xxl"
            assert int(res["gpu"]) == gpu, job
            assert int(res["mem_mb"]) == (32000 if gpu else 4000), job
        else:
            assert int(res.get("gpu", 0)) == 0, job
    # One embedding job per embedding method: the profile's 4 CPUs, capped by cores: 2.
    embeds = [j for j in found if j["rule"] == "embed"]
    assert sorted(j["wildcards"]["method"] for j in embeds) == ["minilm", "st5xxl"]
    assert [j["threads"] for j in embeds] == [2, 2]
    metrics = [j for j in found if j["rule"] == "metrics"]
    assert len(metrics) == 3 and all(j["resources"]["mem_mb"] == "8000" for j in metrics)
