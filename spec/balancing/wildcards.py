"""Wildcard addresses: which plain addresses a wildcard address stands for.

Introduction
------------
An address is a list of *words* split by the delimiter (``.``). A word that
is exactly the any-words character (``#``) stands for zero or more words, one
that is exactly the single-word character (``*``) for exactly one; the
characters inside a longer word are plain text. An address containing either
character anywhere is *wild* (``WildcardConfiguration.isWild``) and is never
the address a message is routed on.

With wildcard routing on (the default), the bindings of a plain address on a
node are its own queues and the queues of every wild address that matches it
(``WildcardAddressManager``, rule LB-WILDCARD-BINDINGS): they join its
routing-name groups and round-robin positions like any other. A wild address
bound by no queue of its own routes nothing (rule LB-WILDCARD-SEND).

>>> from brokerspec.spec.profiles import get_profile
>>> options = get_profile("artemis-latest").balancing
>>> [address_matches(options, "a.#", plain) for plain in ("a", "a.b", "a.b.c", "b")]
[True, True, True, False]
>>> [address_matches(options, "a.*", plain) for plain in ("a", "a.b", "a.b.c")]
[False, True, False]
>>> address_matches(options, "#.b", "b.b"), address_matches(get_profile("artemis-2.11").balancing, "#.b", "b.b")
(True, False)
"""

from __future__ import annotations

from functools import lru_cache

from ..profiles import BalancingOptions, WildcardMatching


def is_wild(options: BalancingOptions, address: str) -> bool:
    """Whether ``address`` contains a wildcard character anywhere (``WildcardConfiguration.isWild``)."""
    return options.wildcard_any_words in address or options.wildcard_single_word in address


def address_matches(options: BalancingOptions, pattern: str, address: str) -> bool:
    """Whether the wild address ``pattern`` stands for the plain ``address`` (rule LB-WILDCARD-MATCH).

    Equal strings always match. Otherwise per :class:`~brokerspec.spec.profiles.WildcardMatching`:
    TREE tries every split (``AddressPartNode.visitMatchingWildcards``), LINKED lets an any-words word that
    is not the last one run to the first later word equal to the next pattern word (``AddressImpl.matches``).
    """
    if pattern == address:
        return True
    return _matches(pattern, address, options.wildcard_delimiter, options.wildcard_any_words,
                    options.wildcard_single_word, options.wildcard_matching is WildcardMatching.TREE)


@lru_cache(maxsize=65536)
def _matches(pattern: str, address: str, delimiter: str, any_words: str, single_word: str, tree: bool) -> bool:
    words = tuple(pattern.split(delimiter))
    plain = tuple(address.split(delimiter))
    if tree:
        return _tree(words, plain, any_words, single_word)
    return _linked(words, plain, any_words, single_word)


def _tree(words: tuple[str, ...], plain: tuple[str, ...], any_words: str, single_word: str) -> bool:
    """Standard word matching: ``reach`` is every count of plain words the pattern so far can consume."""
    reach = {0}
    for word in words:
        if word == any_words:
            reach = set(range(min(reach), len(plain) + 1)) if reach else set()
        elif word == single_word:
            reach = {i + 1 for i in reach if i < len(plain)}
        else:
            reach = {i + 1 for i in reach if i < len(plain) and plain[i] == word}
    return len(plain) in reach


def _linked(words: tuple[str, ...], plain: tuple[str, ...], any_words: str, single_word: str) -> bool:
    """The walk of ``AddressImpl.matches`` (Artemis before 2.17.0), one pattern word at a time."""
    at = 0
    for index, word in enumerate(words):
        last = index == len(words) - 1
        if at >= len(plain):  # only a final word that starts with the any-words character matches nothing
            return last and word.startswith(any_words)
        if word == single_word:
            at += 1
        elif word == any_words:
            if last:
                return True
            following = words[index + 1]
            while at < len(plain) and plain[at] != following:
                at += 1
            if at >= len(plain):
                return False
        elif plain[at] != word:
            return False
        else:
            at += 1
    return at == len(plain)


def binds(options: BalancingOptions, queue_address: str, address: str) -> bool:
    """Whether a queue bound to ``queue_address`` is among the bindings of ``address`` (LB-WILDCARD-BINDINGS).

    Its own address always; with wildcard routing on, also every plain address its wild address matches.
    """
    if queue_address == address:
        return True
    return options.wildcard_routing and is_wild(options, queue_address) and not is_wild(options, address) \
        and address_matches(options, queue_address, address)
