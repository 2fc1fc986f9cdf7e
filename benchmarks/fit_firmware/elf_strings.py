"""Merged string sections of an archive's members (own minimal ar + ELF32 reader).

The linker merges identical strings of SHF_MERGE | SHF_STRINGS sections
(``.rodata.*.str1.1`` / ``.str1.4``) across input files, so what such a section
occupies in an image depends on the other sections linked with it. The tables keep,
per merge section, a short hash and the length of each of its strings (not the
strings), which is enough to predict the merged size of any set of sections.
"""
from __future__ import annotations

import hashlib
import struct
from typing import Dict, Iterator, List, Tuple

SHF_MERGE, SHF_STRINGS = 0x10, 0x20


def archive_members(path: str) -> Iterator[Tuple[str, bytes]]:
    """(member name, bytes) of a GNU ar archive, in order (duplicate names kept)."""
    data = open(path, "rb").read()
    if not data.startswith(b"!<arch>\n"):
        raise ValueError(f"{path}: not an ar archive")
    pos, longnames = 8, b""
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode().rstrip()
        size = int(header[48:58].decode().strip())
        body = data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name == "//":
            longnames = body
            continue
        if name in ("/", "/SYM64/"):
            continue
        if name.startswith("/") and name[1:].isdigit():
            off = int(name[1:])
            name = longnames[off:longnames.index(b"/\n", off)].decode()
        else:
            name = name.rstrip("/")
        yield name, body


def merge_string_sections(elf: bytes) -> Dict[str, List[bytes]]:
    """Section name -> its strings (without the NUL) for SHF_MERGE|SHF_STRINGS sections
    of a little-endian ELF32 relocatable object."""
    if elf[:4] != b"\x7fELF" or elf[4] != 1:
        return {}
    shoff, = struct.unpack_from("<I", elf, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x2E)
    heads = [struct.unpack_from("<IIIIIIIIII", elf, shoff + i * shentsize) for i in range(shnum)]
    names_off = heads[shstrndx][4]

    def name(off: int) -> str:
        end = elf.index(b"\0", names_off + off)
        return elf[names_off + off:end].decode()

    out = {}
    for h in heads:
        sh_name, sh_type, flags, _, offset, size, _, _, _, entsize = h
        if flags & SHF_MERGE and flags & SHF_STRINGS and entsize == 1 and sh_type == 1:
            blob = elf[offset:offset + size]
            out[name(sh_name)] = [s for s in blob.split(b"\0")[:-1]]
    return out


def string_key(s: bytes) -> str:
    """A short hash of one string (the tables keep these, not the strings)."""
    return hashlib.sha1(s).hexdigest()[:12]


def string_pool(path: str) -> Tuple[List[list], Dict[Tuple[str, str], List[int]]]:
    """The library's merge strings as a pool: rows [bytes with the NUL, [ids of the
    strings it is a proper suffix of]] (the linker stores a string that is the tail of
    another only once), and (member, section) -> the ids of its strings. ``path``: an
    archive, or several separated by commas (one library in several archives, e.g.
    esp-tflite-micro's TFLM and ESP-NN: their strings merge with each other)."""
    by_member: Dict[Tuple[str, str], List[bytes]] = {}
    for one in path.split(","):
        for member, elf in archive_members(one):
            for sec, strings in merge_string_sections(elf).items():
                by_member.setdefault((member, sec), []).extend(strings)
    unique = sorted({s for strs in by_member.values() for s in strs})
    ident = {s: i for i, s in enumerate(unique)}
    # proper suffixes: sort by reversed string; a string's extensions follow it
    rev = sorted(unique, key=lambda s: s[::-1])
    supers: Dict[int, List[int]] = {i: [] for i in range(len(unique))}
    for k, s in enumerate(rev):
        for t in rev[k + 1:]:
            if not t.endswith(s):
                break
            supers[ident[s]].append(ident[t])
    pool = [[len(s) + 1, supers[ident[s]]] for s in unique]
    return pool, {key: sorted({ident[s] for s in strs}) for key, strs in by_member.items()}


def merged_bytes(ids, pool: List[list]) -> int:
    """Bytes the strings ``ids`` occupy once merged: each distinct string once, none
    that is the tail of another string of the set."""
    ids = set(ids)
    return sum(pool[i][0] for i in ids if not any(j in ids for j in pool[i][1]))


def library_merge_strings(path: str) -> Dict[Tuple[str, str], List[Tuple[str, int]]]:
    """(member, section) -> [(hash, bytes with the NUL)] over an archive; a member
    name that occurs twice merges its sections' lists (the map cannot tell them apart)."""
    out: Dict[Tuple[str, str], List[Tuple[str, int]]] = {}
    for member, elf in archive_members(path):
        for sec, strings in merge_string_sections(elf).items():
            out.setdefault((member, sec), []).extend((string_key(s), len(s) + 1) for s in strings)
    return out
