"""The skills package's pure core: SKILL.md parsing, zip extraction, folder bundles and resources."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

from host.skills.archive import extract_zip
from host.skills.bundle import check_folder, find_skill_root, hash_folder, list_resources, read_bundle, read_resource
from host.skills.errors import SkillError
from host.skills.front_matter import check_name, parse_skill_md
from host.skills.limits import DEFAULT_LIMITS, SkillLimits

GOOD_MD = """---
name: pdf-tools
description: Fill and merge PDF forms.
license: Apache-2.0
compatibility: Needs a browser tab
metadata:
  author: example-org
  version: "1.0"
allowed-tools: Read  Bash(git:*)
user-invocable: true
model: fast
---

# PDF tools

Use references/forms.md for the field list.
"""


def _error(call, *args, **kwargs) -> SkillError:
    with pytest.raises(SkillError) as caught:
        call(*args, **kwargs)
    return caught.value


def _md(front: str, body: str = "Body.") -> str:
    return f"---\n{front}\n---\n{body}\n"


def _skill(folder: Path, files: dict[str, str | bytes] | None = None, md: str = GOOD_MD) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    all_files: dict[str, str | bytes] = {"SKILL.md": md, "references/forms.md": "# Forms\nname, date\n",
                                         "assets/template.txt": "Dear {name},\n"}
    all_files.update(files or {})
    for rel, content in all_files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    return folder


def _zip(members: list[tuple[str | zipfile.ZipInfo, bytes]], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def _central_header(data: bytes | bytearray, name: bytes) -> int:
    """Where the central directory record of member `name` starts."""
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        length = int.from_bytes(data[at + 28:at + 30], "little")
        if data[at + 46:at + 46 + length] == name:
            return at
        at = data.find(b"PK\x01\x02", at + 1)
    raise AssertionError(f"no member {name!r}")


def _with_nul_name() -> bytes:
    """zipfile cannot write a NUL in a name, so write a placeholder and patch the bytes."""
    return _zip(GOOD_ZIP_MEMBERS + [("references/a#.md", b"x")]).replace(b"references/a#.md", b"references/a\0.md")


def _with_encrypted_member() -> bytes:
    """zipfile resets flag_bits when writing, so set the encryption bit in the central directory."""
    data = bytearray(_zip(GOOD_ZIP_MEMBERS + [("references/secret.md", b"x")]))
    at = _central_header(data, b"references/secret.md")
    data[at + 8] |= 0x1
    return bytes(data)


GOOD_ZIP_MEMBERS = [("SKILL.md", GOOD_MD.encode()), ("references/forms.md", b"# Forms\n")]


# --- SKILL.md -----------------------------------------------------------------------------------

def test_a_good_skill_md_parses_with_exact_values():
    doc = parse_skill_md(GOOD_MD)
    assert doc.name == "pdf-tools"
    assert doc.description == "Fill and merge PDF forms."
    assert doc.license == "Apache-2.0"
    assert doc.compatibility == "Needs a browser tab"
    assert doc.metadata == {"author": "example-org", "version": "1.0"}
    assert doc.allowed_tools == ("Read", "Bash(git:*)")
    assert doc.body == "# PDF tools\n\nUse references/forms.md for the field list."
    assert doc.ignored_fields == ("model", "user-invocable")


def test_optional_fields_default_to_empty():
    doc = parse_skill_md(_md("name: a\ndescription: d"))
    assert (doc.license, doc.compatibility, doc.metadata, doc.allowed_tools, doc.ignored_fields) == \
        (None, None, {}, (), ())
    assert doc.body == "Body."


def test_bom_and_crlf_are_accepted():
    text = "\ufeff" + GOOD_MD.replace("\n", "\r\n")
    doc = parse_skill_md(text)
    assert doc.name == "pdf-tools" and doc.metadata["version"] == "1.0"
    assert "\r" not in doc.body and doc.body.startswith("# PDF tools\n")


@pytest.mark.parametrize("text, says", [
    ("# Just markdown\n", "must start with"),
    ("\n---\nname: a\ndescription: d\n---\n", "must start with"),
    ("", "must start with"),
    ("---\nname: a\ndescription: d\n", "not closed"),
])
def test_missing_front_matter(text, says):
    error = _error(parse_skill_md, text)
    assert error.code == "missing_front_matter" and says in error.message and error.where == "SKILL.md"


@pytest.mark.parametrize("front, where, says", [
    ("name: [unclosed", "SKILL.md", "not valid YAML"),
    ("- a\n- b", "SKILL.md", "a list"),
    ("just a string", "SKILL.md", "mapping"),
    ("description: d", "SKILL.md:name", "required"),
    ("name: a", "SKILL.md:description", "required"),
    ("name: a\ndescription: '   '", "SKILL.md:description", "empty"),
    ("name: a\ndescription: [x]", "SKILL.md:description", "a list"),
    ("name: a\ndescription: " + "x" * 1025, "SKILL.md:description", "1025 characters"),
    ("name: a\ndescription: d\ncompatibility: " + "x" * 501, "SKILL.md:compatibility", "501"),
    ("name: a\ndescription: d\nlicense: 2024-01-01", "SKILL.md:license", "a date"),
    ("name: 12\ndescription: d", "SKILL.md:name", "a number"),
    ("name: a\ndescription: d\nmetadata: [1]", "SKILL.md:metadata", "mapping"),
    ("name: a\ndescription: d\nmetadata:\n  version: 1.0", "SKILL.md:metadata", "'version'"),
    ("name: a\ndescription: d\nallowed-tools: {a: b}", "SKILL.md:allowed-tools", "space-separated"),
    ("name: a\ndescription: !!python/object:os.system x", "SKILL.md", "not valid YAML"),
])
def test_invalid_front_matter_names_the_field(front, where, says):
    error = _error(parse_skill_md, _md(front))
    assert error.code == "invalid_front_matter"
    assert error.where == where
    assert says in error.message
    assert error.wire() == {"code": "invalid_front_matter", "message": error.message, "where": where}


def test_yaml_line_numbers_count_from_the_top_of_skill_md():
    error = _error(parse_skill_md, _md("name: a\ndescription: d\n\tbad: x"))
    assert "(line 4 of SKILL.md)" in error.message and error.code == "invalid_front_matter"


def test_a_yaml_alias_bomb_is_refused():
    bomb = ("name: a\ndescription: d\n"
            'l0: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
            + "".join(f"l{i}: &{chr(97 + i)} [*{chr(96 + i)},*{chr(96 + i)},*{chr(96 + i)},*{chr(96 + i)}]\n"
                      for i in range(1, 9)))
    error = _error(parse_skill_md, _md(bomb))
    assert error.code == "invalid_front_matter" and "aliases" in error.message


def test_a_single_anchor_is_refused_too():
    error = _error(parse_skill_md, _md("name: &n a\ndescription: d"))
    assert error.code == "invalid_front_matter" and "anchors" in error.message and "line 2" in error.message


def test_the_front_matter_is_capped_before_parsing():
    error = _error(parse_skill_md, _md("name: a\ndescription: d\n" + "x: " + "y" * 17000))
    assert error.code == "invalid_front_matter" and "16384" in error.message


def test_deeply_nested_yaml_is_refused_not_crashing():
    error = _error(parse_skill_md, _md("name: a\ndescription: d\nx: " + "[" * 5000 + "]" * 5000))
    assert error.code == "invalid_front_matter"


@pytest.mark.parametrize("name", ["", "PDF", "pdf_tools", "-pdf", "pdf-", "pdf--tools", "a" * 65, "pdf tools",
                                  "pdf.tools", "pdé", "pdf\n"])
def test_bad_names_are_refused_with_the_rule(name):
    error = _error(check_name, name)
    assert error.code == "invalid_name" and "lowercase letters" in error.message


def test_bad_name_in_front_matter_says_where():
    error = _error(parse_skill_md, _md("name: My-Skill\ndescription: d"))
    assert error.code == "invalid_name" and error.where == "SKILL.md:name" and "'My-Skill'" in error.message


@pytest.mark.parametrize("name", ["a", "pdf", "pdf-tools-2", "a" * 64, "0x1"])
def test_good_names_pass(name):
    assert check_name(name) == name


def test_a_body_over_the_cap_says_both_sizes():
    limits = SkillLimits(max_body_bytes=100)
    parse_skill_md(_md("name: a\ndescription: d", "é" * 50), limits)  # exactly 100 bytes
    error = _error(parse_skill_md, _md("name: a\ndescription: d", "é" * 51), limits)
    assert error.code == "body_too_large" and "102 bytes" in error.message and "100 bytes" in error.message


def test_a_skill_md_over_its_cap_is_refused():
    error = _error(parse_skill_md, _md("name: a\ndescription: d", "x" * (80 * 1024)))
    assert error.code == "file_too_large" and error.where == "SKILL.md"


def test_yaml_is_imported_lazily():
    code = "import sys, host.skills.front_matter, host.skills.bundle, host.skills.archive; print('yaml' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60)
    assert done.stdout.strip() == "False", done.stderr


# --- zips -----------------------------------------------------------------------------------------

def test_a_good_zip_extracts(tmp_path):
    dest = tmp_path / "out"
    extract_zip(_zip(GOOD_ZIP_MEMBERS + [("assets/", b""), ("__MACOSX/._SKILL.md", b"junk"),
                                         ("references/.DS_Store", b"junk")]), dest)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == \
        ["SKILL.md", "assets", "references", "references/forms.md"]
    assert (dest / "SKILL.md").read_text() == GOOD_MD
    assert read_bundle(dest).doc.name == "pdf-tools"


def test_a_zip_from_a_path_into_an_existing_empty_folder(tmp_path):
    source = tmp_path / "skill.zip"
    source.write_bytes(_zip(GOOD_ZIP_MEMBERS))
    (tmp_path / "out").mkdir()
    extract_zip(source, tmp_path / "out")
    assert (tmp_path / "out" / "references" / "forms.md").read_bytes() == b"# Forms\n"


def test_a_nested_single_folder_zip_finds_its_root(tmp_path):
    dest = tmp_path / "out"
    extract_zip(_zip([("pdf-tools/", b""), ("pdf-tools/SKILL.md", GOOD_MD.encode()),
                      ("pdf-tools/references/forms.md", b"x"), ("__MACOSX/pdf-tools/._SKILL.md", b"junk")]), dest)
    assert find_skill_root(dest) == dest / "pdf-tools"
    bundle = read_bundle(dest)
    assert bundle.root == dest / "pdf-tools" and [f.path for f in bundle.files] == ["SKILL.md", "references/forms.md"]


def _symlink_member(name: str = "references/link.md") -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize("member, code, where", [
    ("../evil", "unsafe_path", "../evil"),
    ("references/../../evil", "unsafe_path", "references/../../evil"),
    ("/abs", "unsafe_path", "/abs"),
    ("C:\\x", "unsafe_path", "C:\\x"),
    ("C:/x", "unsafe_path", "C:/x"),
    ("references\\..\\..\\evil", "unsafe_path", "references\\..\\..\\evil"),
    ("references//a.md", "unsafe_path", "references//a.md"),
    (_symlink_member(), "symlink", "references/link.md"),
])
def test_bad_members_are_refused_and_nothing_is_written(tmp_path, member, code, where):
    dest = tmp_path / "out"
    # The good members come first: they must not be written either.
    error = _error(extract_zip, _zip(GOOD_ZIP_MEMBERS + [(member, b"/etc/passwd")]), dest)
    assert error.code == code and error.where == where
    assert not dest.exists()
    assert not (tmp_path / "evil").exists()


def test_a_nul_in_a_member_name_is_refused(tmp_path):
    error = _error(extract_zip, _with_nul_name(), tmp_path / "out")
    assert error.code == "unsafe_path" and "control character" in error.message
    assert error.where == "references/a\\x00.md" and not (tmp_path / "out").exists()


def test_an_encrypted_member_is_refused(tmp_path):
    encrypted = zipfile.ZipFile(io.BytesIO(_with_encrypted_member())).getinfo("references/secret.md")
    assert encrypted.flag_bits & 0x1
    error = _error(extract_zip, _with_encrypted_member(), tmp_path / "out")
    assert error.code == "bad_archive" and "encrypted" in error.message and error.where == "references/secret.md"
    assert not (tmp_path / "out").exists()


def test_a_zip_bomb_is_refused_before_writing(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    bomb = _zip(GOOD_ZIP_MEMBERS + [("references/zeros.bin", bytes(20 * 1024 * 1024))])
    assert len(bomb) < 100 * 1024
    error = _error(extract_zip, bomb, dest)
    assert error.code == "file_too_large" and error.where == "references/zeros.bin"
    error = _error(extract_zip, bomb, dest, SkillLimits(max_file_bytes=64 * 1024 * 1024,
                                                        max_total_bytes=64 * 1024 * 1024))
    assert error.code == "archive_too_large" and "zip bomb" in error.message
    assert list(dest.iterdir()) == []


def test_the_declared_total_is_capped(tmp_path):
    members = GOOD_ZIP_MEMBERS + [(f"assets/{i}.txt", os.urandom(1000)) for i in range(5)]
    error = _error(extract_zip, _zip(members), tmp_path / "out", SkillLimits(max_total_bytes=4000))
    assert error.code == "archive_too_large" and not (tmp_path / "out").exists()


def test_actual_bytes_are_counted_not_declared_sizes(tmp_path):
    data = bytearray(_zip([("SKILL.md", GOOD_MD.encode()), ("assets/big.txt", b"a" * 5000)],
                          zipfile.ZIP_STORED))
    # Shrink the declared size of assets/big.txt in the central directory only.
    central = _central_header(data, b"assets/big.txt")
    data[central + 24:central + 28] = (10).to_bytes(4, "little")
    dest = tmp_path / "out"
    error = _error(extract_zip, bytes(data), dest, SkillLimits(max_file_bytes=4096))
    assert error.code == "bad_archive" and error.where == "assets/big.txt"
    assert not dest.exists()


def test_the_running_count_stops_what_the_checks_let_through(tmp_path, monkeypatch):
    from host.skills import archive

    checks = archive._checked_members
    monkeypatch.setattr(archive, "_checked_members", lambda zf, limits: checks(zf, DEFAULT_LIMITS))
    data = _zip(GOOD_ZIP_MEMBERS + [("assets/big.txt", os.urandom(5000))])
    error = _error(extract_zip, data, tmp_path / "a", SkillLimits(max_file_bytes=4096))
    assert error.code == "file_too_large" and error.where == "assets/big.txt" and "4096" in error.message
    error = _error(extract_zip, data, tmp_path / "b", SkillLimits(max_total_bytes=3000))
    assert error.code == "archive_too_large"
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_too_many_files(tmp_path):
    members = GOOD_ZIP_MEMBERS + [(f"assets/{i}.txt", b"x") for i in range(10)]
    error = _error(extract_zip, _zip(members), tmp_path / "out", SkillLimits(max_files=5))
    assert error.code == "too_many_files" and "5" in error.message


def test_duplicate_and_clashing_names_are_refused(tmp_path):
    for extra in [("references/forms.md", b"other"), ("REFERENCES/FORMS.md", b"other"),
                  ("references/forms.md/x", b"other")]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns when it writes a duplicate name
            archive = _zip(GOOD_ZIP_MEMBERS + [extra])
        error = _error(extract_zip, archive, tmp_path / "out")
        assert error.code == "bad_archive" and not (tmp_path / "out").exists()


@pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x03\x04" + b"\0" * 40])
def test_not_a_zip_is_bad_archive(tmp_path, data):
    error = _error(extract_zip, data, tmp_path / "out")
    assert error.code == "bad_archive" and not (tmp_path / "out").exists()


def test_a_corrupt_member_leaves_nothing(tmp_path):
    data = bytearray(_zip(GOOD_ZIP_MEMBERS + [("assets/z.txt", b"hello world " * 100)]))
    at = data.find(b"assets/z.txt") + len("assets/z.txt") + 5  # inside the first member's compressed data
    data[at] ^= 0xFF
    dest = tmp_path / "out"
    dest.mkdir()
    error = _error(extract_zip, bytes(data), dest)
    assert error.code == "bad_archive" and list(dest.iterdir()) == []


def test_the_destination_must_be_empty(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        extract_zip(_zip(GOOD_ZIP_MEMBERS), tmp_path / "out")
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


def test_too_deep_zip_paths_are_refused(tmp_path):
    deep = "/".join(["d"] * 10) + "/x.md"
    error = _error(extract_zip, _zip(GOOD_ZIP_MEMBERS + [(deep, b"x")]), tmp_path / "out")
    assert error.code == "unsafe_path" and "8" in error.message


# --- bundles --------------------------------------------------------------------------------------

def test_read_bundle_lists_and_hashes_files(tmp_path):
    root = _skill(tmp_path / "pdf-tools", {"scripts/run.py": "print(1)\n"})
    bundle = read_bundle(root)
    assert bundle.root == root and bundle.doc.name == "pdf-tools"
    assert [f.path for f in bundle.files] == ["SKILL.md", "assets/template.txt", "references/forms.md",
                                               "scripts/run.py"]
    forms = bundle.files[2]
    assert forms.size == len("# Forms\nname, date\n")
    assert forms.sha256 == hashlib.sha256(b"# Forms\nname, date\n").hexdigest()
    assert bundle.has_scripts is True
    assert len(bundle.content_hash) == 64 and hash_folder(root) == bundle.content_hash


def test_has_scripts_needs_files_in_scripts(tmp_path):
    root = _skill(tmp_path / "s")
    (root / "scripts").mkdir()
    assert read_bundle(root).has_scripts is False


def test_the_content_hash_tracks_every_change(tmp_path):
    one = hash_folder(_skill(tmp_path / "one"))
    assert hash_folder(_skill(tmp_path / "two")) == one

    edited = _skill(tmp_path / "edited", {"assets/template.txt": "Dear {name}.\n"})
    assert hash_folder(edited) != one

    renamed = _skill(tmp_path / "renamed")
    (renamed / "assets" / "template.txt").rename(renamed / "assets" / "template.md")
    assert hash_folder(renamed) != one

    added = _skill(tmp_path / "added", {"assets/empty.txt": ""})
    assert hash_folder(added) != one

    removed = _skill(tmp_path / "removed")
    (removed / "assets" / "template.txt").unlink()
    assert hash_folder(removed) != one

    moved = _skill(tmp_path / "moved")
    (moved / "references" / "template.txt").write_bytes((moved / "assets" / "template.txt").read_bytes())
    (moved / "assets" / "template.txt").unlink()
    assert hash_folder(moved) != one


def test_a_symlinked_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    root = _skill(tmp_path / "s")
    (root / "references" / "more").symlink_to(outside, target_is_directory=True)
    error = _error(read_bundle, root)
    assert error.code == "symlink" and error.where == "references/more"
    assert _error(hash_folder, root).code == "symlink"


def test_check_folder_refuses_the_shape_without_parsing(tmp_path):
    root = _skill(tmp_path / "s", md="not a skill yet")
    check_folder(root)
    (root / "assets" / "passwd").symlink_to("/etc/passwd")
    assert _error(check_folder, root).code == "symlink"
    assert _error(check_folder, _skill(tmp_path / "t"), SkillLimits(max_files=2)).code == "too_many_files"


def test_a_symlinked_file_is_refused(tmp_path):
    root = _skill(tmp_path / "s")
    (root / "assets" / "passwd").symlink_to("/etc/passwd")
    error = _error(read_bundle, root)
    assert error.code == "symlink" and error.where == "assets/passwd"


def test_folder_limits(tmp_path):
    root = _skill(tmp_path / "s", {f"assets/{i}.txt": "x" * 100 for i in range(5)})
    assert _error(read_bundle, root, SkillLimits(max_files=4)).code == "too_many_files"
    error = _error(read_bundle, root, SkillLimits(max_file_bytes=99))
    assert error.code == "file_too_large" and "over the cap of 99" in error.message
    assert _error(read_bundle, root, SkillLimits(max_total_bytes=500)).code == "archive_too_large"
    deep = _skill(tmp_path / "deep", {"/".join(["d"] * 9) + "/x.md": "x"})
    error = _error(read_bundle, deep)
    assert error.code == "unsafe_path" and error.where == "/".join(["d"] * 9)
    read_bundle(_skill(tmp_path / "ok", {"/".join(["d"] * 8) + "/x.md": "x"}))


def test_not_a_skill(tmp_path):
    (tmp_path / "empty").mkdir()
    assert _error(read_bundle, tmp_path / "empty").code == "not_a_skill"
    (tmp_path / "two" / "a").mkdir(parents=True)
    (tmp_path / "two" / "b").mkdir()
    (tmp_path / "two" / "a" / "SKILL.md").write_text(GOOD_MD)
    assert _error(find_skill_root, tmp_path / "two").code == "not_a_skill"
    (tmp_path / "lower").mkdir()
    (tmp_path / "lower" / "skill.md").write_text(GOOD_MD)
    error = _error(find_skill_root, tmp_path / "lower")
    assert error.code == "not_a_skill" and "found skill.md" in error.message
    assert _error(find_skill_root, tmp_path / "missing").code == "not_a_skill"


def test_a_bad_skill_md_in_a_folder_reports_the_field(tmp_path):
    root = _skill(tmp_path / "s", md=_md("name: s\ndescription: 5"))
    error = _error(read_bundle, root)
    assert error.code == "invalid_front_matter" and error.where == "SKILL.md:description"
    (root / "SKILL.md").write_bytes(b"---\nname: s\ndescription: \xff\n---\n")
    assert _error(read_bundle, root).code == "not_text"


# --- resources ------------------------------------------------------------------------------------

def test_read_resource_returns_text(tmp_path):
    root = _skill(tmp_path / "s", {"references/deep/api.md": "\ufeffAPI ✓\n"})
    assert read_resource(root, "references/forms.md") == "# Forms\nname, date\n"
    assert read_resource(root, "./references//deep/api.md") == "API ✓\n"
    assert read_resource(root, "assets/template.txt") == "Dear {name},\n"


def test_binary_resources_are_refused(tmp_path):
    root = _skill(tmp_path / "s", {"assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0", "assets/latin1.txt": b"caf\xe9"})
    error = _error(read_resource, root, "assets/logo.png")
    assert error.code == "not_text" and error.where == "assets/logo.png"
    assert _error(read_resource, root, "assets/latin1.txt").code == "not_text"


def test_a_too_large_resource_says_size_and_cap(tmp_path):
    root = _skill(tmp_path / "s", {"references/big.md": "x" * (DEFAULT_LIMITS.max_resource_bytes + 1)})
    error = _error(read_resource, root, "references/big.md")
    assert error.code == "file_too_large"
    assert str(DEFAULT_LIMITS.max_resource_bytes + 1) in error.message
    assert str(DEFAULT_LIMITS.max_resource_bytes) in error.message


@pytest.mark.parametrize("resource, code", [
    ("references/../SKILL.md", "unsafe_path"),
    ("../outside.md", "unsafe_path"),
    ("/etc/passwd", "unsafe_path"),
    ("C:/Windows/win.ini", "unsafe_path"),
    ("references\\forms.md", "unsafe_path"),
    ("references/forms.md\0", "unsafe_path"),
    ("", "unsafe_path"),
    ("SKILL.md", "not_a_resource"),
    ("scripts/run.py", "not_a_resource"),
    ("references", "not_a_resource"),
])
def test_bad_resource_paths(tmp_path, resource, code):
    root = _skill(tmp_path / "s", {"scripts/run.py": "print(1)"})
    assert _error(read_resource, root, resource).code == code


def test_a_symlink_to_a_file_outside_is_refused(tmp_path):
    (tmp_path / "secret.txt").write_text("secret")
    root = _skill(tmp_path / "s")
    (root / "references" / "secret.md").symlink_to(tmp_path / "secret.txt")
    error = _error(read_resource, root, "references/secret.md")
    assert error.code == "symlink" and error.where == "references/secret.md"
    assert "references/secret.md" not in list_resources(root)


def test_a_symlinked_resource_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "forms.md").write_text("secret")
    root = tmp_path / "s"
    root.mkdir()
    (root / "SKILL.md").write_text(GOOD_MD)
    (root / "references").symlink_to(outside, target_is_directory=True)
    error = _error(read_resource, root, "references/forms.md")
    assert error.code == "symlink"
    assert list_resources(root) == []


def test_not_found_lists_what_exists(tmp_path):
    root = _skill(tmp_path / "s", {"scripts/run.py": "x"})
    error = _error(read_resource, root, "references/nope.md")
    assert error.code == "not_found" and error.where == "references/nope.md"
    assert "assets/template.txt, references/forms.md" in error.message and "scripts" not in error.message
    assert _error(read_resource, root, "references").code == "not_a_resource"
    assert _error(read_resource, root, "references/forms.md/x").code == "not_found"


def test_not_found_lists_at_most_twenty(tmp_path):
    root = _skill(tmp_path / "s", {f"references/{i:02}.md": "x" for i in range(30)})
    error = _error(read_resource, root, "assets/nope")
    assert "references/18.md" in error.message and "references/19.md" not in error.message
    assert "and 12 more" in error.message


def test_list_resources(tmp_path):
    root = _skill(tmp_path / "s", {"references/deep/api.md": "x", "scripts/run.py": "x"})
    assert list_resources(root) == ["assets/template.txt", "references/deep/api.md", "references/forms.md"]
