"""The package list for setuptools: `agentrt` and every package inside the folders that
pyproject.toml's [tool.setuptools.package-dir] maps under it, found on disk so a new
subpackage ships without an edit here. Everything else about the build is in pyproject.toml.
"""

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
MAPPED: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]


def _packages() -> list[str]:
    found = []
    for name, folder in MAPPED.items():
        # Namespace packages too: api/static and the migrations carry package data.
        subs = find_namespace_packages(ROOT / folder, exclude=["*__pycache__*"])
        found += [name, *(f"{name}.{sub}" for sub in subs)]
    return found


setup(packages=_packages())
