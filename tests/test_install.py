"""A plain install carries everything: a wheel installed outside the checkout runs the bundled files.

One module-scoped fixture builds the wheel, installs it into a fresh virtual
environment and runs the installed ``rpa-sim`` from an empty folder (about 20 s).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from rpa_sim.cli.entry import main
from rpa_sim.study.scenario import load_scenario

# builds a wheel and installs it into a fresh virtual environment: a minute of work, in the slow run
pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[1]
# What the build reads; the wheel is built from a copy, as building in the checkout would leave build/ and
# egg-info behind, and a stale build/lib can carry modules deleted since into the wheel.
BUILD_INPUTS = ("pyproject.toml", "MANIFEST.in", "README.md", "rpa_sim")
DECOY_POLICY = "name: decoy\ndescription: A local file named like the bundled policy.\nreview_if: {confidence: sweep}\n"


def _run(command: list[str | Path], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH could put the checkout ahead of the installed package
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{command} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def _in_checkout(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel built and installed into a fresh venv; its ``bin`` folder and an empty working folder."""
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        if (PROJECT / name).is_dir():
            shutil.copytree(PROJECT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(PROJECT / name, source / name)
    _run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", "-w", root / "wheels"], cwd=root)
    (wheel,) = (root / "wheels").glob("rpa_sim-*.whl")

    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], cwd=root)
    bin_folder = venv / "bin"
    # the dependencies come from the interpreter running the tests; when that is itself a venv,
    # --system-site-packages reaches only its base, so its own site-packages are named too (a .pth
    # adds folders to sys.path but runs none of their .pth files, so no editable finder comes with them)
    purelib = _run([bin_folder / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                   cwd=root).stdout.strip()
    Path(purelib, "outer-site-packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    # pip in the venv leaves the checkout's editable install alone: it is outside the venv
    _run([bin_folder / "python", "-m", "pip", "install", "--no-deps", "--force-reinstall", "--no-index", wheel],
         cwd=root)

    workdir = root / "elsewhere"
    workdir.mkdir()
    return {"bin": bin_folder, "venv": venv, "workdir": workdir}


def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    probe = ("import json, rpa_sim, rpa_sim.bundled as b, rpa_sim.cli.entry; "
             "print(json.dumps([rpa_sim.__file__, rpa_sim.cli.entry.__file__, "
             "str(b.bundled_files('policy')['confidence'])]))")
    files = json.loads(_run([installed["bin"] / "python", "-c", probe], cwd=installed["workdir"]).stdout)
    venv = installed["venv"].resolve()
    for file in files:
        assert Path(file).resolve().is_relative_to(venv), f"{file} is not in the venv {venv}"
    # the checkout's own (editable) install is still the one this process runs
    import rpa_sim
    assert Path(rpa_sim.__file__).resolve().is_relative_to(PROJECT)


def test_demo_names_the_five_policies_as_the_checkout_does(installed, capsys):
    scenario, _ = load_scenario("receipts-demo")
    names = [entry if isinstance(entry, str) else entry["name"] for entry in scenario.policies]
    assert len(names) == 5
    out = _run([installed["bin"] / "rpa-sim", "demo", "--text"], cwd=installed["workdir"]).stdout
    rows = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert set(names) <= rows
    assert out == _in_checkout(capsys, "demo", "--text")


def test_run_and_report_a_bundled_scenario(installed):
    workdir = installed["workdir"]
    summary = json.loads(_run([installed["bin"] / "rpa-sim", "run", "receipts-demo", "--json"], cwd=workdir).stdout)
    assert [p["policy"] for p in summary["policies"]] == ["confidence", "per-field", "document-escalation",
                                                          "audited-budget", "escalate-strict-totals"]
    _run([installed["bin"] / "rpa-sim", "report", "receipts-demo", "--out", "r.html"], cwd=workdir)
    html = (workdir / "r.html").read_text(encoding="utf-8")
    assert "<svg" in html and "escalate-strict-totals" in html


def test_sweep_with_a_bundled_policy_while_a_local_file_has_its_name(installed, capsys):
    workdir = installed["workdir"] / "sweep"
    workdir.mkdir()
    cli = installed["bin"] / "rpa-sim"
    _run([cli, "generate", "receipts", "--n", "40", "--seed", "1", "--out", "small.jsonl"], cwd=workdir)
    (workdir / "confidence.yaml").write_text(DECOY_POLICY)
    bundled = _run([cli, "sweep", "small.jsonl", "--policy", "confidence", "--format", "csv"], cwd=workdir).stdout
    rows = bundled.splitlines()
    assert rows[0].startswith("policy,threshold,auto_rate,") and len(rows) > 2
    assert {row.split(",")[0] for row in rows[1:]} == {"confidence"}
    assert bundled == _in_checkout(capsys, "sweep", str(workdir / "small.jsonl"), "--policy", "confidence",
                                   "--format", "csv")
    local = _run([cli, "sweep", "small.jsonl", "--policy", "./confidence.yaml", "--format", "csv"], cwd=workdir)
    assert {row.split(",")[0] for row in local.stdout.splitlines()[1:]} == {"decoy"}


def test_the_dashboard_finds_its_stylesheet(installed):
    probe = ("import json; from rpa_sim.tui.app import DashboardApp; "
             "print(json.dumps([[str(p), p.read_text(encoding='utf-8')] for p in DashboardApp().css_path]))")
    (path, text), = json.loads(_run([installed["bin"] / "python", "-c", probe], cwd=installed["workdir"]).stdout)
    assert Path(path).resolve().is_relative_to(installed["venv"].resolve())
    assert text == (PROJECT / "rpa_sim" / "tui" / "app.tcss").read_text(encoding="utf-8")
