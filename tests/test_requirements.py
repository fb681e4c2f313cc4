"""requirements.txt deploys as it is: every runtime package pinned, torch from PyTorch's CPU-only index on Linux."""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"


def lines(name: str) -> list[str]:
    text = (ROOT / name).read_text(encoding="utf-8").splitlines()
    return [line.split(" #")[0].strip() for line in text if line.strip() and not line.startswith("#")]


def requirements(name: str = "requirements.txt") -> list[Requirement]:
    return [Requirement(line) for line in lines(name) if not line.startswith("-")]


def test_every_runtime_package_is_pinned_exactly():
    for requirement in requirements():
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", str(requirement)


def test_torch_is_the_cpu_wheel_on_linux_and_the_same_release_elsewhere():
    assert CPU_INDEX in lines("requirements.txt")
    linux = {"sys_platform": "linux"}
    mac = {"sys_platform": "darwin"}
    torch = [r for r in requirements() if r.name == "torch"]
    on_linux = [r for r in torch if r.marker is None or r.marker.evaluate(linux)]
    on_mac = [r for r in torch if r.marker is None or r.marker.evaluate(mac)]
    assert [str(r.specifier) for r in on_linux] == ["==2.13.0+cpu"]
    assert [str(r.specifier) for r in on_mac] == ["==2.13.0"]
    # PEP 440: a plain ==2.13.0 would also accept the +cpu build (and pip would prefer it, the
    # local label sorts higher); the Linux pin names it so a missing index fails instead of
    # silently installing PyPI's CUDA wheel.
    assert Version("2.13.0+cpu") in on_mac[0].specifier


def test_dev_requirements_and_the_dockerfile_install_the_same_file():
    assert "-r requirements.txt" in lines("requirements-dev.txt")
    assert "RUN pip install -r requirements.txt" in (ROOT / "Dockerfile").read_text(encoding="utf-8")
