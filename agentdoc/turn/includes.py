"""Files and pictures a prompt brings in: ``@path`` / ``@glob`` lines, ``![alt](file)``, and
Obsidian's ``[[note]]`` / ``![[picture.png]]``.

agentdoc, not the agent, decides what a prompt may read (PRODUCT.md §9). A line of the prompt
made only of ``@`` tokens (``@notes/spec.txt``, ``@src/*.py``, ``@"a file.txt"``) is replaced,
in what is sent, by each file's text under its path; the document keeps the line. A markdown
image whose target is a local file goes as an image block. Every path is resolved against the
turn's working folder, symlinks first, and must land inside that folder, the enclosing git work
tree or one of the user's ``add_dirs``. Anything else — a path out, a missing or binary file, a
file or a prompt over its size cap — is refused before anything is sent, with a message that
names the path, so the prompt stays pending.

An Obsidian link names a file by its name anywhere in the vault (the nearest folder up from the
working folder that holds ``.obsidian/``, which may then be read like the git work tree; else the
working folder itself), as Obsidian resolves it (:mod:`agentdoc.turn.wikilinks`). The file then
goes through the same rules and caps: a note's
text follows the paragraph that links it, a picture goes as an image. A link to a note nobody
has written yet is what Obsidian users leave on purpose, so it stays text; an embed of a missing
file is refused like a missing ``@path``.

Lines inside code (fenced, indented, HTML blocks) are text, never includes, and so is an ``@``
token that shares its line with other words: a decorator in a pasted snippet or a mention of
``@alice`` is sent as written (an agent's own expansion of such tokens is neutralised where
that agent is driven).
"""

from __future__ import annotations

import glob
import itertools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from agentdoc.agents import ImagePart, ImageType
from agentdoc.errors import PromptRefused
from agentdoc.turn import wikilinks

_TOKEN = re.compile(r'@"([^"]+)"|@(\S+)')
_INCLUDE_LINE = re.compile(r'[ \t]*(?:(?:@"[^"]+"|@\S+)[ \t]*)+')
_GLOB = re.compile(r"[*?\[]")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # http:, https:, data:, file:, mailto:…
_CODE = ("fence", "code_block", "html_block")
BINARY_PROBE = 8192  # bytes looked at for a NUL
MAX_MATCHES = 200  # files one glob may bring in
MAX_VAULT_FILES = 100_000  # files looked through to resolve an Obsidian link by its name
_SIGNATURES: tuple[tuple[bytes, int, ImageType], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
)


class IncludeRefused(PromptRefused):
    """A file or picture the prompt names may not be sent; the prompt stays pending."""


@dataclass(frozen=True)
class Limits:
    file_bytes: int = 256 * 1024
    prompt_bytes: int = 1024 * 1024
    image_bytes: int = 5 * 1024 * 1024  # the Messages API's own limit per image


@dataclass(frozen=True)
class Place:
    """Where a turn may read: the working folder (paths resolve against it) and the roots."""

    cwd: Path
    roots: tuple[Path, ...]


@dataclass(frozen=True)
class Context:
    text: str  # the prompt as sent: include lines replaced by the files they name
    images: tuple[ImagePart, ...] = ()
    files: tuple[str, ...] = ()  # the paths included, as shown to the model


def place_for(cwd: Path, add_dirs: Iterable[str] = ()) -> Place:
    """The working folder, its git work tree and Obsidian vault (if any), the user's folders."""
    roots = [cwd.resolve()]
    # Like the git work tree, a vault around the working folder is the project it belongs to.
    roots.extend(tree for tree in (git_work_tree(roots[0]), vault_root(roots[0])) if tree)
    roots.extend((cwd / Path(folder).expanduser()).resolve() for folder in add_dirs)
    return Place(cwd, tuple(roots))


def git_work_tree(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def code_lines(prompt: str) -> set[int]:
    """0-based lines of the prompt that are code, where nothing is an include."""
    lines: set[int] = set()
    for token in _parse(prompt):
        if token.type in _CODE and token.map is not None:
            lines.update(range(*token.map))
    return lines


def _parse(prompt: str) -> list[Token]:
    return MarkdownIt("commonmark").parse(prompt)


def include_tokens(line: str) -> list[str] | None:
    """The paths of a line made only of ``@`` tokens, else None."""
    if not _INCLUDE_LINE.fullmatch(line):
        return None
    return [quoted or bare for quoted, bare in _TOKEN.findall(line)]


def image_targets(prompt: str) -> list[str]:
    """Local files named by markdown images outside code, in order (URLs are left as text)."""
    targets: list[str] = []
    for token in _parse(prompt):
        for child in token.children or ():
            src = child.attrGet("src") if child.type == "image" else None
            if isinstance(src, str) and src and not _URL.match(src):
                targets.append(unquote(src))
    return targets


def resolve(prompt: str, place: Place, limits: Limits = Limits()) -> Context:
    """The prompt to send with its includes read in and its pictures attached (or a refusal)."""
    code = code_lines(prompt)
    reader = _Reader(place, limits, limits.prompt_bytes)
    linked, pictures = _linked(wikilinks.find(prompt), reader)
    out: list[str] = []
    for number, line in enumerate(prompt.split("\n")):
        tokens = None if number in code else include_tokens(line)
        if tokens is None:
            out.append(line)
        else:
            out.extend(
                _block(shown, text) for token in tokens for shown, text in reader.read(token)
            )
        out.extend(linked.get(number, ()))
    images = tuple(
        _picture(f"![…]({target})", target, place, limits) for target in image_targets(prompt)
    )
    return Context("\n".join(out), images + pictures, tuple(reader.files))


def _linked(
    links: list[wikilinks.WikiLink], reader: _Reader
) -> tuple[dict[int, list[str]], tuple[ImagePart, ...]]:
    """The blocks of the notes the links name, by the line they follow, and their pictures."""
    if not links:
        return {}, ()
    place = reader.place
    vault = vault_root(place.cwd.resolve()) or place.cwd.resolve()
    files = _vault_files(vault)
    if files is None:
        # Too big to look through: plain links stay text, as an unwritten note's would.
        embeds = [link.written for link in links if link.embed]
        if embeds:
            raise IncludeRefused(
                f"{embeds[0]}: {vault} holds more than {MAX_VAULT_FILES} files to look "
                "through; name the file with @path instead"
            )
        return {}, ()
    here = place.cwd.resolve().relative_to(vault).as_posix().removeprefix(".")
    blocks: dict[int, list[str]] = {}
    pictures: list[ImagePart] = []
    seen: set[tuple[str, str]] = set()
    for link in links:
        if link.key in seen:
            continue
        seen.add(link.key)
        found = wikilinks.pick(link.target, files, here)
        if found is None:
            if link.embed:
                raise IncludeRefused(
                    f"{link.written}: no file named {link.target!r} in {vault} "
                    "(to send it as text, put it in backticks)"
                )
            continue  # a note not written yet
        if wikilinks.is_image(found):
            pictures.append(_picture(link.written, str(vault / found), place, reader.limits, found))
            continue
        text = _text(link.written, _checked(str(vault / found), place, link.written), reader.limits)
        part = wikilinks.section(text, link.heading)
        if part is None:
            raise IncludeRefused(f"{link.written}: {found} has no heading {link.heading!r}")
        shown = f"{found}#{link.heading}" if link.heading else found
        reader.take(link.written, shown, part)
        blocks.setdefault(link.line, []).append(_block(shown, part))
    return blocks, tuple(pictures)


def vault_root(folder: Path) -> Path | None:
    """The Obsidian vault around a folder: the nearest one up holding ``.obsidian/``."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".obsidian").is_dir():
            return candidate
    return None


def _vault_files(vault: Path) -> list[str] | None:
    """The vault's files as ``/`` paths from its top (hidden ones skipped, as Obsidian does), or
    None past ``MAX_VAULT_FILES``."""
    files: list[str] = []
    for folder, dirs, names in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        where = Path(folder).relative_to(vault)
        files.extend((where / name).as_posix() for name in names if not name.startswith("."))
        if len(files) > MAX_VAULT_FILES:
            return None
    return files


def _block(shown: str, text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"Contents of `{shown}`:\n{fence}\n{body}{fence}"


@dataclass
class _Reader:
    """Reads the files of one prompt's include tokens, within the per-prompt budget."""

    place: Place
    limits: Limits
    left: int  # bytes the prompt may still include
    files: list[str] = field(default_factory=list)

    def read(self, token: str) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for name in _expand(token, self.place):
            label = f"@{token}" if token == name else f"@{token} ({name})"
            text = _text(label, _checked(name, self.place, label), self.limits)
            self.take(label, name, text)
            found.append((name, text))
        return found

    def take(self, label: str, name: str, text: str) -> None:
        """Count the text against the prompt's budget, or refuse it."""
        size = len(text.encode("utf-8"))
        if size > self.left:
            raise IncludeRefused(
                f"{label} would take the prompt's includes over "
                f"{_size(self.limits.prompt_bytes)} (include_prompt_limit); include fewer files"
            )
        self.left -= size
        self.files.append(name)


def _expand(token: str, place: Place) -> list[str]:
    """The files a token names: itself, or a glob's matches (folders skipped), sorted."""
    if not _GLOB.search(token):
        return [token]
    pattern = os.path.expanduser(token)
    # Walk only where reading is allowed: `@/**/*` must not search the whole disk first.
    _checked(_static_prefix(pattern) or ".", place, f"@{token}", folder_ok=True)
    files: list[str] = []
    for match in glob.iglob(pattern, root_dir=place.cwd, recursive=True):
        if not (place.cwd / match).is_dir():
            files.append(match)
        if len(files) > MAX_MATCHES:
            raise IncludeRefused(
                f"@{token} matches more than {MAX_MATCHES} files; narrow the pattern"
            )
    if not files:
        raise IncludeRefused(f"@{token} matches no file in {place.cwd}")
    return sorted(files)


def _static_prefix(pattern: str) -> str:
    """The folder part of a glob before its first wildcard (``src`` of ``src/**/*.py``)."""
    parts = Path(pattern).parts
    fixed = list(itertools.takewhile(lambda part: not _GLOB.search(part), parts[:-1]))
    return str(Path(*fixed)) if fixed else ""


def _checked(name: str, place: Place, label: str, *, folder_ok: bool = False) -> Path:
    """The real file ``name`` leads to, if it is inside the allowed folders."""
    candidate = place.cwd / Path(name).expanduser()
    try:
        real = candidate.resolve(strict=True)
    except FileNotFoundError:
        raise IncludeRefused(
            f"{label}: no such file in {place.cwd} (to send the `@` as text, put it in backticks)"
        ) from None
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long…
        raise IncludeRefused(f"{label}: cannot be read ({exc})") from None
    if not any(real.is_relative_to(root) for root in place.roots):
        raise IncludeRefused(
            f"{label} is outside the folders a prompt may read ({_roots(place)}); "
            "add its folder to add_dirs in your agentdoc config to allow it"
        )
    if real.is_dir() and not folder_ok:
        raise IncludeRefused(f"{label} is a folder; name its files, e.g. @{name.rstrip('/')}/*")
    return real


def _text(label: str, path: Path, limits: Limits) -> str:
    data = _read(label, path, limits.file_bytes, "include_file_limit")
    if b"\0" in data[:BINARY_PROBE]:
        raise IncludeRefused(f"{label} is a binary file; only text files can be included")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise IncludeRefused(
            f"{label} is not UTF-8 text (a binary file?); only text files can be included"
        ) from None


def _read(label: str, path: Path, cap: int, key: str) -> bytes:
    try:
        size = path.stat().st_size
        if size > cap:
            raise IncludeRefused(f"{label} is {_size(size)}, over the {_size(cap)} cap ({key})")
        return path.read_bytes()
    except OSError as exc:
        raise IncludeRefused(f"{label} cannot be read: {exc.strerror or exc}") from None


def _picture(
    label: str, target: str, place: Place, limits: Limits, shown: str | None = None
) -> ImagePart:
    data = _read(label, _checked(target, place, label), limits.image_bytes, "image_limit")
    kind = image_type(data)
    if kind is None:
        raise IncludeRefused(
            f"{label} is not a PNG, JPEG, GIF or WebP picture; only those can be sent"
        )
    return ImagePart(shown or target, kind, data)


def image_type(data: bytes) -> ImageType | None:
    """The picture's type from its first bytes (never from its name)."""
    for magic, offset, kind in _SIGNATURES:
        if data[offset : offset + len(magic)] == magic and (offset == 0 or data[:4] == b"RIFF"):
            return kind
    return None


def _roots(place: Place) -> str:
    return ", ".join(str(root) for root in place.roots)


def _size(n: int) -> str:
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"
