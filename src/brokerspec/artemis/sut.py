"""A real Artemis broker as a system under test: ``brokerspec conform --sut artemis[:VERSION]``.

Introduction
------------
:class:`ArtemisSut` is a :class:`~brokerspec.conform.sut.Sut` like brokerspec's
own layers: ``hello`` creates and starts one broker of the release (once per
run; it is shared by every case), ``reset`` makes it empty for the next case
(without a restart wherever the domain adapter can), ``execute`` hands each
operation to the domain's adapter (:mod:`.addressing`, :mod:`.duplicates`),
and ``close`` stops the broker and the client driver. It speaks SUT protocol
version 3: the queries, and ``prepare`` (XA branches, :mod:`.xa`).

It implements the release's own profile only (``hello`` says which), and it
refuses a ``reset`` whose profile asks for behaviour the release cannot be
configured to have: a profile option is either something the adapter sets
on the broker (the cache size, whether IDs persist) or a fact of the release, and a fact cannot be overridden. Such a
reset is a :class:`~.outcomes.NotExpressible`, so the case is reported as
not expressible rather than as a failure of the broker.

Everything lives in a scratch folder (``workdir``, a temporary one by
default) that ``close`` removes unless ``keep`` is set: the instance, its
journal and logs, the probe's file and the driver's log.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from brokerspec.conform.protocol import XA_VERSION, FailureKind, Hello, SutFailure
from brokerspec.spec import Outcome, Profile, get_profile

from .addressing import AddressingAdapter
from .balancing import BalancingAdapter
from .broker import ArtemisBroker, BrokerFailed, find_free_port
from .cluster import ArtemisCluster
from .config import BrokerConfig
from .driver import CallFailed, Driver, DriverLost
from .duplicates import DuplicatesAdapter
from .node import Node, ProbeLog
from .outcomes import NotExpressible
from .releases import ArtemisUnavailable, Release, get_release

DOMAINS = ("addressing", "duplicates", "balancing")

CONFIGURABLE = {
    "duplicates.id_cache_size",
    "duplicates.persist_id_cache",
    "addressing.consumer",
}
"""Profile options the adapter can give the broker, or its own clients (which client a consume uses: the core
JMS client or the core client); every other option is a fact of the release."""

UNOBSERVABLE = {
    "balancing.copy_before_target",
}
"""Options no client can see the value of: whether a failed redistribution attempt used up a message ID
(ARTEMIS-4207). The adapter numbers copies the 2.29.0 way and accepts either value."""


def release_profile(release: Release) -> Profile:
    """The profile the release stands for, with the options where it differs from it."""
    return get_profile(release.profile, release.overrides)


def unexpressible_options(release: Release, profile: Profile, domain: str) -> list[str]:
    """The ``domain`` options ``profile`` sets to a value the release lacks and the adapter cannot configure."""
    own = release_profile(release).options()[domain]
    wanted = profile.options()[domain]
    return [f"{domain}.{option}={value} (the release has {own[option]})" for option, value in wanted.items()
            if value != own[option] and f"{domain}.{option}" not in CONFIGURABLE | UNOBSERVABLE]


def judged_profile(version: str, profile: Profile) -> Profile:
    """``profile`` with the release's own differences from it applied, unless the caller set those options."""
    release = get_release(version)
    if profile.name != release.profile:
        return profile
    chosen = {dotted for dotted, _ in profile.overrides}
    for dotted, value in release.overrides:
        if dotted not in chosen:
            profile = profile.with_option(dotted, value)
    return profile


class ArtemisSut:
    """Apache ActiveMQ Artemis ``version`` on 127.0.0.1, driven through its core and AMQP clients."""

    def __init__(self, version: str, workdir: Path | None = None, keep: bool = False, timeout: float = 30.0) -> None:
        self.release = get_release(version)
        self.version = version
        self.label = f"artemis:{version}"
        self.keep = keep
        self.timeout = timeout
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix=f"brokerspec-artemis-{version}-"))
        self.node: Node | None = None
        self.adapter: Any = None
        self.domain = ""
        self.base_config: BrokerConfig | None = None
        """The node's configuration as first started: what every domain starts from."""
        self.started_in = 0.0
        self.cluster: ArtemisCluster | None = None
        """The three-node cluster of the load-balancing domain, started by its first case."""

    def hello(self, profile: Profile, domains: tuple[str, ...]) -> Hello:
        """Create and start the broker (once); the domains and the one profile this release implements."""
        if self.node is None:
            self._start()
        return Hello(f"Apache ActiveMQ Artemis {self.version}", DOMAINS, (self.release.profile,), version=XA_VERSION)

    def _start(self) -> None:
        try:
            port = find_free_port()
            config = BrokerConfig("n1", port, str(self.workdir / "n1-probe.jsonl"))
            broker = ArtemisBroker(self.version, self.workdir / "n1", config)
            broker.create()
            self.started_in = broker.start()
            driver = Driver(self.version, self.workdir / "driver", timeout=self.timeout)
            node = Node("n1", broker, driver)
            node.connect()
        except (ArtemisUnavailable, BrokerFailed, CallFailed, DriverLost) as error:
            raise SutFailure(FailureKind.CRASHED, "hello", f"Artemis {self.version} did not start: {error}") from None
        self.node = node
        self.base_config = node.settled_config()

    def reset(self, domain: str, profile: Profile) -> None:
        """An empty broker for ``domain`` under ``profile``; NotExpressible for a profile the release cannot be."""
        if self.node is None:
            self._start()
        assert self.node is not None
        unexpressible = unexpressible_options(self.release, profile, domain)
        if unexpressible:
            raise NotExpressible(f"Artemis {self.version} cannot be configured to have "
                                 f"{'; '.join(unexpressible)}")
        if domain != self.domain:
            self._leave_domain()
            self.adapter = self._adapter(domain)
            self.domain = domain
        try:
            self.adapter.reset(profile)
        except (CallFailed, DriverLost, BrokerFailed, SutFailure):
            self._start_clean(domain)
            self._guard(lambda: self.adapter.reset(profile), "reset")

    def _adapter(self, domain: str) -> Any:
        """The domain's adapter; the load-balancing one on the cluster, started on first use."""
        assert self.node is not None
        if domain != "balancing":
            return {"addressing": AddressingAdapter, "duplicates": DuplicatesAdapter}[domain](self.node)
        if self.cluster is None:
            cluster = ArtemisCluster(self.version, self.workdir, self.node.driver)
            try:
                cluster.start()
            except (ArtemisUnavailable, BrokerFailed, CallFailed, DriverLost) as error:
                cluster.close()
                raise SutFailure(FailureKind.CRASHED, "reset",
                                 f"the Artemis {self.version} cluster did not start: {error}") from None
            self.cluster = cluster
        return BalancingAdapter(self.cluster)

    def _leave_domain(self) -> None:
        """Before another domain's cases: the last adapter's clients closed, the broker's first configuration back.

        One domain's settings (prefixes, address settings, cache sizes) must not
        reach the next: an empty prefix left by an addressing case would strip
        and retype every name the duplicate-detection cases use.
        """
        assert self.node is not None
        if self.adapter is not None:
            self._guard(self.adapter.leave, "reset")
        if self.base_config is not None and self.node.settled_config() != self.base_config:
            self._guard(lambda: self.node.reconfigure(self.base_config, restart=True), "reset")

    def _start_clean(self, domain: str) -> None:
        """The way out of a broker that cannot be emptied: stopped, its journal deleted, started again."""
        node = self.node
        assert node is not None
        node.driver.close()
        node.broker.stop()
        node.broker.wipe_data()
        node.broker.start()
        node.probe = ProbeLog(node.probe.path)
        node.connect()
        if domain == "balancing" and self.cluster is not None:
            self.cluster.close()
            self.cluster = None
        self.adapter = self._adapter(domain)

    def execute(self, command: Any) -> Outcome:
        """Perform one operation on the broker."""
        if self.adapter is None:
            raise SutFailure(FailureKind.CRASHED, "op", "no reset before the first operation")
        outcome: Outcome = self._guard(lambda: self.adapter.execute(command), f"op ({command.op})")
        return outcome

    def _guard(self, action: Any, where: str) -> Any:
        """Run ``action``; a lost driver or broker becomes a SUT failure (and the broker is started afresh)."""
        try:
            return action()
        except SutFailure:
            raise
        except (DriverLost, BrokerFailed, CallFailed) as error:
            self._recover()
            raise SutFailure(FailureKind.CRASHED, where, str(error)) from None

    def _recover(self) -> None:
        """After a lost driver or broker: a new driver connection, the broker restarted if it is down."""
        node = self.node
        if node is None:
            return
        try:
            if not node.broker.running:
                node.broker.start()
            node.connect()
        except (DriverLost, BrokerFailed, CallFailed):
            node.broker.kill()
        if self.cluster is not None and self.domain == "balancing":
            # its connections may have gone with the driver: the next case starts it afresh
            self.cluster.close()
            self.cluster = None
        self.domain = ""
        self.adapter = None

    def resident_megabytes(self) -> float | None:
        """The single node's JVM's resident memory now (the cluster's is :meth:`.ArtemisCluster.resident_megabytes`)."""
        return None if self.node is None else self.node.broker.resident_megabytes()

    def close(self) -> None:
        """Stop the broker and the driver; remove the scratch folder unless ``keep``."""
        node, self.node = self.node, None
        cluster, self.cluster = self.cluster, None
        if cluster is not None:
            cluster.close()
        if node is not None:
            node.driver.close()
            node.broker.stop()
        if not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)
