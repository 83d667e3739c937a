"""Artemis releases: which one stands for which profile, where it comes from, and the two Java programs built for it.

Introduction
------------
brokerspec judges its ``artemis-*`` profiles against the releases they name.
Artemis's binary distribution is on Maven Central as
``org.apache.activemq:apache-artemis`` (classifier ``bin``, type ``tar.gz``);
:func:`ensure_distribution` fetches it with Maven into a cache folder outside
the repository (``$BROKERSPEC_ARTEMIS_CACHE``, else
``~/.cache/brokerspec/artemis``) and unpacks it there, once.

The release table (:data:`RELEASES`) says, for each release, the profile it
stands for and the options that differ between the release and the profile
(a profile may describe a later release of the same line than the newest one
served), and the Java options it needs. :data:`DEFAULT_RELEASE` is the one a
bare ``--sut artemis`` runs.

Two small Java programs come with the adapter, as source: the client-side
driver (:mod:`.driver`) and the observer plugin that runs inside the broker
(:mod:`.probe`). :func:`ensure_java_build` compiles both with ``javac``
against the very release's ``lib/`` jars, so the client libraries and the
plugin API always match the broker, and caches the classes by release and
source digest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from brokerspec.spec import BrokerspecError

MAVEN_ARTIFACT = "org.apache.activemq:apache-artemis:{version}:tar.gz:bin"


class ArtemisUnavailable(BrokerspecError):
    """Artemis cannot be run here: the distribution, Maven, Java or javac is missing; the message says which."""


@dataclass(frozen=True)
class Release:
    """One Artemis release brokerspec runs, and what it stands for."""

    version: str
    profile: str
    """The profile this release is judged against."""
    overrides: tuple[tuple[str, str], ...] = ()
    """Options where this release differs from the profile, applied on top of it."""
    java_options: tuple[str, ...] = ()
    """Extra JVM options the release needs on the machine's Java 17."""
    why: str = ""
    """Why this release stands for the profile, for the docs."""


RELEASES: dict[str, Release] = {
    "2.40.0": Release(
        "2.40.0", "artemis-latest",
        overrides=(("balancing.fqqn_send", "LOCAL"),),
        why="the newest release served on Maven Central. The profile describes 2.44.0; the one option where "
            "2.40.0 differs, FQQN sends going through load balancing (ARTEMIS-5597, 2.43.0), is set back to "
            "2.35-2.42's LOCAL when 2.40.0 is the judge"),
    "2.11.0": Release(
        "2.11.0", "artemis-2.11",
        java_options=("--add-opens", "java.base/java.lang=ALL-UNNAMED"),
        why="the release the profile names; it runs on Java 17 once JAXB may open java.lang "
            "(--add-opens java.base/java.lang=ALL-UNNAMED, which later releases' start scripts add themselves)"),
}

DEFAULT_RELEASE = "2.40.0"

PROFILE_RELEASES = {release.profile: release.version for release in RELEASES.values()}
"""The release that judges each profile."""


def get_release(version: str) -> Release:
    """The table entry for ``version``; ArtemisUnavailable names the known ones."""
    if version not in RELEASES:
        raise ArtemisUnavailable(f"no Artemis release {version!r} in brokerspec's table; known: "
                                 f"{', '.join(RELEASES)}")
    return RELEASES[version]


def cache_folder() -> Path:
    """Where distributions and builds are kept: ``$BROKERSPEC_ARTEMIS_CACHE`` or ``~/.cache/brokerspec/artemis``."""
    configured = os.environ.get("BROKERSPEC_ARTEMIS_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "brokerspec" / "artemis"


def distribution_home(version: str) -> Path:
    """The unpacked distribution's folder (it may not exist yet)."""
    return cache_folder() / f"apache-artemis-{version}"


def find_tool(name: str) -> str:
    """The path of command ``name``, or ArtemisUnavailable saying what to install."""
    path = shutil.which(name)
    if path is None:
        hint = {"mvn": "Maven (Debian: maven)", "java": "a Java 17 runtime (Debian: openjdk-17-jre-headless)",
                "javac": "a Java 17 JDK (Debian: openjdk-17-jdk-headless)"}.get(name, name)
        raise ArtemisUnavailable(f"{name} is not on the PATH; install {hint}")
    return path


def ensure_distribution(version: str) -> Path:
    """The distribution of ``version``, fetched from Maven Central and unpacked into the cache when missing."""
    get_release(version)
    home = distribution_home(version)
    if (home / "bin" / "artemis").is_file():
        return home
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / f"apache-artemis-{version}-bin.tar.gz"
    if not archive.is_file():
        command = [find_tool("mvn"), "-q", "-B", "dependency:copy",
                   f"-Dartifact={MAVEN_ARTIFACT.format(version=version)}", f"-DoutputDirectory={folder}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
        if done.returncode != 0 or not archive.is_file():
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
            raise ArtemisUnavailable(f"Maven could not fetch Artemis {version} "
                                     f"({MAVEN_ARTIFACT.format(version=version)}): {' | '.join(tail)}")
    partial = folder / f".unpacking-{version}-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(partial, filter="tar")
    unpacked = partial / f"apache-artemis-{version}"
    if not (unpacked / "bin" / "artemis").is_file():
        raise ArtemisUnavailable(f"{archive} does not hold apache-artemis-{version}/bin/artemis")
    if not home.exists():
        unpacked.rename(home)
    shutil.rmtree(partial, ignore_errors=True)
    return home


JAVA_SOURCES = ("BrokerspecDriver.java", "BrokerspecProbe.java")


def java_source(name: str) -> str:
    """The text of one of the adapter's Java sources, shipped with the package."""
    return (files("brokerspec.artemis") / "java" / name).read_text(encoding="utf-8")


def ensure_java_build(version: str) -> Path:
    """The folder of the driver's and the probe's classes for ``version``, compiled when missing.

    The classes are kept under the cache by release and by a digest of the
    sources, so an edited source is compiled again and two releases never
    share classes.
    """
    home = ensure_distribution(version)
    digest = hashlib.sha256("".join(java_source(n) for n in JAVA_SOURCES).encode()).hexdigest()[:12]
    classes = cache_folder() / "build" / f"{version}-{digest}"
    if (classes / "BrokerspecDriver.class").is_file() and (classes / "brokerspec-probe.jar").is_file():
        return classes
    partial = classes.with_name(classes.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    sources = partial / "src"
    sources.mkdir(parents=True)
    for name in JAVA_SOURCES:
        (sources / name).write_text(java_source(name), encoding="utf-8")
    compiled = subprocess.run(
        [find_tool("javac"), "-nowarn", "-encoding", "UTF-8", "-cp", str(home / "lib" / "*"), "-d", str(partial),
         *(str(sources / n) for n in JAVA_SOURCES)], capture_output=True, text=True, timeout=300, check=False)
    if compiled.returncode != 0:
        raise ArtemisUnavailable(f"javac could not build the Artemis adapter for {version}: "
                                 f"{compiled.stderr.strip()[-800:]}")
    jar = subprocess.run([find_tool("jar"), "cf", str(partial / "brokerspec-probe.jar"), "-C", str(partial),
                          "BrokerspecProbe.class"], capture_output=True, text=True, timeout=120, check=False)
    if jar.returncode != 0:
        raise ArtemisUnavailable(f"jar could not package the probe for {version}: {jar.stderr.strip()[-400:]}")
    shutil.rmtree(classes, ignore_errors=True)
    partial.rename(classes)
    return classes
