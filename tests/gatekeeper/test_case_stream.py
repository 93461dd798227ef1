"""Cases as JSON Lines, as multi-line documents or mixed; a broken case loses none after it and
an unclosed one costs linear time."""

import io
import json
import time

from host.cli.case_stream import MAX_CASE_CHARS, read_cases


def read(text: str):
    return [(p.line, p.value, p.error) for p in read_cases(io.StringIO(text))]


def test_lines_and_documents_mix():
    pretty = json.dumps({"tool": "click", "target": {"input_type": "password"}}, indent=2)
    got = read('{"tool": "a"}\n\n' + pretty + "\n" + '{"s": "a}b{"}\n')
    assert [(line, value) for line, value, _ in got] == [
        (1, {"tool": "a"}), (3, {"tool": "click", "target": {"input_type": "password"}}), (9, {"s": "a}b{"})]


def test_a_broken_line_never_swallows_the_next_case():
    got = read('{"tool": "click"\n{"tool": "x"}\n{not json\n{"tool": "y"}\n{"s": "open\n{"tool": "z"}\n')
    assert [value for _, value, _ in got if value] == [{"tool": "x"}, {"tool": "y"}, {"tool": "z"}]
    errors = [(line, error) for line, _, error in got if error]
    assert [line for line, _ in errors] == [1, 3, 5]
    assert "next case starts before this case is complete" in errors[0][1]
    assert "Expecting property name" in errors[1][1] and "Unterminated string starting at column" in errors[2][1]


def test_an_error_inside_a_document_is_reported_once_with_its_line():
    got = read('{\n "a": 1\n "b": 2\n}\n{"tool": "x"}\n')
    assert got[0][0] == 1 and "line 3 column 2" in got[0][2] and got[1][1] == {"tool": "x"} and len(got) == 2


def test_the_end_of_input_inside_a_case_is_reported():
    assert read('{\n "a": 1\n') == [(1, None, "not valid JSON: the input ends before this case is complete")]


def test_an_unclosed_case_is_cut_off_in_linear_time():
    text = "{\n" + '  "a": {},\n' * 50_000 + '{"tool": "x"}\n'
    began = time.monotonic()
    got = read(text)
    assert time.monotonic() - began < 5
    assert str(MAX_CASE_CHARS) in got[0][2] and got[-1][1] == {"tool": "x"}
