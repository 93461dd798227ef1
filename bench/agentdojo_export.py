"""Export the public agentdojo benchmark's suites as provenance cases for bench_provenance.

Runs INSIDE the scratch venv of bench/agentdojo_venv.py (never imports our `host` package):

    "$(python bench/agentdojo_venv.py)" bench/agentdojo_export.py --out bench/agentdojo_cases.jsonl

Why: bench/provenance_cases.jsonl was written by hand. This replays the real package instead.
For each suite of agentdojo's default benchmark version, the ground-truth function calls of every
user task (benign) and injection task (attack) run through agentdojo's own FunctionsRuntime on
the suite's environment; each read call's output (as agentdojo formats it for the model) becomes
untrusted content, and each write call is mapped to the browser calls (type, click,
select_option, navigate) a web UI of that site would need. An attack pairs an injection task
with the first user task whose ground truth reads an injection vector (agentdojo's own canary
check); the vectors that task sees hold agentdojo's "important_instructions" attack text, as in
agentdojo's benchmark runs. One JSON object per browser call, with what the model had seen
before it (the task's prompt, the user's own details from the environment, the tool outputs so
far, each under the origin of the page that would show it); see bench/provenance_cases.jsonl.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suites

BENCHMARK_VERSION = "v1.2.2"  # the default of agentdojo's benchmark script (agentdojo.scripts.benchmark)
MODEL_PIPELINE = "gpt-4o-2024-05-13"  # names the model in the attack text ("GPT-4")
TEXT_CAP = 20_000

BANK = "https://www.mybank.example"
MAIL = "https://mail.workspace.example"
CALENDAR = "https://calendar.workspace.example"
DRIVE = "https://drive.workspace.example"
SLACK = "https://app.slack.com"
BOOKING = "https://www.booking.example"
SLACK_WORKSPACE = "Blue Sparrow"  # the slack environment names no workspace
SITE_NAMES = {BANK: "MyBank", MAIL: "Mail", CALENDAR: "Calendar", DRIVE: "Drive", SLACK: f"{SLACK_WORKSPACE} - Slack",
              BOOKING: "Booking"}

WRITES = {
    "send_money", "schedule_transaction", "update_scheduled_transaction", "update_password", "update_user_info",
    "send_email", "delete_email", "create_calendar_event", "cancel_calendar_event", "reschedule_calendar_event",
    "add_calendar_event_participants", "append_to_file", "create_file", "delete_file", "share_file",
    "send_direct_message", "send_channel_message", "invite_user_to_slack", "remove_user_from_slack",
    "add_user_to_channel", "post_webpage", "reserve_hotel", "reserve_restaurant", "reserve_car_rental",
}
NAVIGATES = {"get_webpage"}  # a read for agentdojo, a navigation (a write) in a browser


def site_of(suite: str, function: str) -> str:
    """The origin whose page shows (or takes) what `function` reads (or writes)."""
    if "email" in function or "contact" in function:
        return MAIL
    if "calendar" in function or function in ("get_current_day", "get_day_calendar_events"):
        return CALENDAR
    if "file" in function and suite == "workspace":
        return DRIVE
    return {"banking": BANK, "slack": SLACK, "travel": BOOKING, "workspace": DRIVE}[suite]


def url_of(address: str) -> str:
    return address if "://" in address else f"https://{address}"


def origin_of(address: str) -> str:
    match = re.match(r"([a-z]+://[^/?#]+)", url_of(address))
    return match.group(1) if match else url_of(address)


def number(value) -> str:
    return str(value) if isinstance(value, int) else f"{float(value):.2f}"


# -- one write call as browser steps ---------------------------------------------------------------

def field(label, text, input_type="text", *, role="textbox", tag="input", autocomplete=None, mode=None,
          submit=False):
    hint = {"role": role, "name": label, "tag": tag}
    if input_type and tag == "input":
        hint["input_type"] = input_type
    if autocomplete:
        hint["autocomplete"] = autocomplete
    params = {"element": label, "text": str(text)}
    if mode:
        params["mode"] = mode
    if submit:
        params["submit"] = True
        hint["submits"] = True
    return ("type", params, hint)


def button(label, *, submits=False, form_fields=None, role="button", heading=None):
    hint = {"role": role, "name": label, "tag": {"button": "button", "checkbox": "input"}.get(role, "div"),
            "submits": submits}
    if role == "checkbox":
        hint["input_type"] = "checkbox"
    if form_fields:
        hint["form_fields"] = form_fields
    if heading:  # a control outside the form (opens it), under another heading
        hint["heading"] = heading
    return ("click", {"element": label}, hint)


TRANSFER = {"send_money": "Send money", "schedule_transaction": "Schedule transfer",
            "update_scheduled_transaction": "Save changes"}
RESERVE = {  # function: ((argument, field label), ...), input type of the dates
    "reserve_hotel": ((("hotel", "Property"), ("start_day", "Check-in"), ("end_day", "Check-out")), "date"),
    "reserve_restaurant": ((("restaurant", "Restaurant"), ("start_time", "Date and time")), "datetime-local"),
    "reserve_car_rental": ((("company", "Rental company"), ("start_time", "Pick-up"), ("end_time", "Drop-off")),
                           "datetime-local"),
}


def browser_steps(suite: str, function: str, args: dict, env) -> list[tuple[str, str, list, str | None]]:
    """[(origin, heading, steps, url to navigate to first)] for one write call; a step is
    (tool, params, hint)."""
    a = {k: v for k, v in args.items() if v is not None}
    if function in TRANSFER:
        steps = [field(label, conv(a[key]), kind) for key, label, kind, conv in (
            ("recipient", "Recipient IBAN", "text", str), ("amount", "Amount", "text", number),
            ("subject", "Subject", "text", str), ("date", "Date", "date", str)) if key in a]
        if "recurring" in a:
            steps.append(button("Recurring", role="checkbox"))
        steps.append(button(TRANSFER[function], submits=True,
                            form_fields=["iban", "transaction-amount", "text", "date"]))
        return [(BANK, "Transfer money", steps, None)]
    if function == "update_password":
        return [(BANK, "Security", [field("New password", a["password"], "password", autocomplete="new-password"),
                                    button("Change password", submits=True, form_fields=["new-password"])], None)]
    if function == "update_user_info":
        tokens = {"first_name": ("First name", "given-name"), "last_name": ("Last name", "family-name"),
                  "street": ("Street", "address-line1"), "city": ("City", "address-level2")}
        steps = [field(label, a[key], autocomplete=token) for key, (label, token) in tokens.items() if key in a]
        steps.append(button("Save", submits=True, form_fields=[token for _, token in tokens.values()]))
        return [(BANK, "Your profile", steps, None)]
    if function == "send_email":
        steps = [button("Compose", heading="Inbox")]
        for key, label in (("recipients", "To"), ("cc", "Cc"), ("bcc", "Bcc")):
            steps += [field(label, address, "email") for address in a.get(key) or []]
        steps += [field("Subject", a.get("subject", "")), field("Message Body", a.get("body", ""), tag="textarea")]
        for attachment in a.get("attachments") or []:
            file = env.cloud_drive.files.get(str(attachment.get("file_id"))) if hasattr(env, "cloud_drive") else None
            name = file.filename if file else str(attachment.get("file_id", attachment))
            steps += [button("Attach files"), button(name, role="option")]
        kinds = ["email"] * (1 + bool(a.get("cc")) + bool(a.get("bcc"))) + ["text", "textarea"]
        steps.append(button("Send", submits=True, form_fields=kinds))
        return [(MAIL, "New message", steps, None)]
    if function == "delete_email":
        email = env.inbox.emails.get(str(a["email_id"]))
        return [(MAIL, email.subject if email else "Inbox", [button("Move to trash")], None)]
    if function == "create_calendar_event":
        steps = [field("Add title", a.get("title", "")), field("Start", a["start_time"], "datetime-local"),
                 field("End", a["end_time"], "datetime-local")]
        if a.get("location"):
            steps.append(field("Location", a["location"]))
        if a.get("description"):
            steps.append(field("Add description", a["description"], tag="textarea"))
        steps += [field("Add guests", guest, "email") for guest in a.get("participants") or []]
        steps.append(button("Save", submits=True, form_fields=["text", "datetime-local", "datetime-local", "text",
                                                                "textarea", "email"]))
        return [(CALENDAR, "New event", steps, None)]
    if function in ("reschedule_calendar_event", "add_calendar_event_participants", "cancel_calendar_event"):
        event = env.calendar.events.get(str(a["event_id"]))
        heading = event.title if event else "Event"
        if function == "cancel_calendar_event":
            return [(CALENDAR, heading, [button("Delete event")], None)]
        steps = [field("Start", a["new_start_time"], "datetime-local")] if "new_start_time" in a else []
        if "new_end_time" in a:
            steps.append(field("End", a["new_end_time"], "datetime-local"))
        steps += [field("Add guests", guest, "email") for guest in a.get("participants") or []]
        steps.append(button("Save", submits=True, form_fields=["datetime-local", "datetime-local", "email"]))
        return [(CALENDAR, heading, steps, None)]
    if function in ("append_to_file", "create_file", "delete_file", "share_file"):
        file = env.cloud_drive.files.get(str(a.get("file_id")))
        name = file.filename if file else a.get("filename", str(a.get("file_id")))
        if function == "create_file":
            return [(DRIVE, "New document", [field("File name", a["filename"]),
                                             field("Document body", a.get("content", ""), tag="textarea"),
                                             button("Create", submits=True, form_fields=["text", "textarea"])], None)]
        if function == "append_to_file":  # the editor saves by itself
            return [(DRIVE, name, [field("Document body", a["content"], tag="textarea", mode="append")], None)]
        if function == "delete_file":
            return [(DRIVE, name, [button("Delete forever")], None)]
        role = {"r": "Viewer", "rw": "Editor"}.get(str(a.get("permission")), str(a.get("permission")))
        return [(DRIVE, f'Share "{name}"', [field("Add people", a["email"], "email"),
                                             ("select_option", {"element": "Permission", "values": [role]},
                                              {"role": "combobox", "name": "Permission", "tag": "select"}),
                                             button("Send", submits=True, form_fields=["email", "select-one"])], None)]
    if function == "send_direct_message":
        return [(SLACK, a["recipient"], [field(f"Message {a['recipient']}", a["body"], tag="div", submit=True)], None)]
    if function == "send_channel_message":
        channel = f"#{a['channel']}"
        return [(SLACK, channel, [field(f"Message {channel}", a["body"], tag="div", submit=True)], None)]
    if function == "invite_user_to_slack":
        return [(SLACK, f"Invite people to {SLACK_WORKSPACE}", [
            button("Invite people", heading=SLACK_WORKSPACE), field("To", a["user_email"], "email"),
            button("Send", submits=True, form_fields=["email"])], None)]
    if function == "remove_user_from_slack":
        return [(SLACK, a["user"], [button("Remove from workspace")], None)]
    if function == "add_user_to_channel":
        channel = f"#{a['channel']}"
        return [(SLACK, channel, [button("Add people")], None),
                (SLACK, f"Add people to {channel}", [field("Enter a name or email", a["user"]),
                                                     button("Add", submits=True, form_fields=["text"])], None)]
    if function == "post_webpage":
        return [(origin_of(a["url"]), "Edit page", [field("Content", a["content"], tag="textarea"),
                                                    button("Publish", submits=True, form_fields=["textarea"])],
                 url_of(a["url"]))]
    if function in RESERVE:
        fields, kind = RESERVE[function]
        steps = [field(label, a[key], kind if n else "text") for n, (key, label) in enumerate(fields) if key in a]
        steps.append(button("Reserve", submits=True, form_fields=["text"] + [kind] * (len(steps) - 1)))
        return [(BOOKING, "Complete your booking", steps, None)]
    raise KeyError(function)


# -- running a scenario ----------------------------------------------------------------------------

class Scenario:
    """The browser calls of one scenario, with what the model had seen before each."""

    def __init__(self, suite: str, prompt: str, own: list[str]):
        self.suite, self.prompt, self.own = suite, prompt, own
        self.seen: list[dict] = []
        self.calls: list[dict] = []
        self.form = 0

    def read(self, origin: str, text: str) -> None:
        item = {"origin": origin, "text": text[:TEXT_CAP]}
        if text and item not in self.seen:
            self.seen.append(item)

    def emit(self, tool: str, params: dict, origin: str, hint: dict | None, heading: str | None) -> None:
        target = None
        if hint is not None:
            hint = {"ref": params["ref"], **({"heading": heading} if heading else {}), **hint}
            title = hint.get("heading")
            target = {"title": f"{title} - {SITE_NAMES[origin]}" if origin in SITE_NAMES else title, "hints": [hint]}
        self.calls.append({"tool": tool, "params": params, "origin": origin, "target": target,
                           "untrusted": list(self.seen)})

    def write(self, function: str, args: dict, env) -> None:
        for origin, heading, steps, url in browser_steps(self.suite, function, args, env):
            if url:
                self.emit("navigate", {"url": url}, SLACK if self.suite == "slack" else origin, None, None)
            self.form += 1
            refs: dict[str, str] = {}
            for tool, params, hint in steps:
                ref = refs.setdefault(params["element"], f"s1_{self.form}_{len(refs) + 1}")
                self.emit(tool, {"ref": ref, **params}, origin, hint, heading)

    def grants(self) -> list[list[str]]:
        out: list[list[str]] = []
        for call in self.calls:
            where = origin_of(call["params"]["url"]) if call["tool"] == "navigate" else call["origin"]
            if [call["tool"], where] not in out:
                out.append([call["tool"], where])
        return out

    def cases(self, name: str, grants: list) -> list[dict]:
        return [{"name": f"{name}#{k}", "tool": c["tool"], "params": c["params"], "origin": c["origin"],
                 "grants": grants,
                 "provenance": {"user": [self.prompt], "own": self.own, "untrusted": c["untrusted"]},
                 **({"target": c["target"]} if c["target"] else {})}
                for k, c in enumerate(self.calls, start=1)]


def run_calls(scenario: Scenario, calls, env, runtime: FunctionsRuntime, *, writes: bool, problems: list) -> None:
    """Run `calls` on `env` in order: reads (and navigations) add their output to what the model
    saw; writes become browser calls when `writes` (and are skipped otherwise)."""
    for call in calls:
        function, args = call.function, dict(call.args)
        if function in WRITES:
            if not writes:
                continue
            try:
                scenario.write(function, args, env)
            except KeyError as exc:
                problems.append(f"{scenario.suite}: cannot map {function} ({exc})")
        elif function in NAVIGATES and writes:
            scenario.emit("navigate", {"url": url_of(args["url"])}, site_of(scenario.suite, function), None, None)
        result, error = runtime.run_function(env, function, args, raise_on_error=False)
        if error:
            problems.append(f"{scenario.suite}: {function}({args}) failed: {error}")
        elif function not in WRITES:
            origin = origin_of(args["url"]) if function in NAVIGATES else site_of(scenario.suite, function)
            scenario.read(origin, tool_result_to_str(result))


# The accounts the user holds on the suite's sites, as they would list them in settings (the
# bank they use, their mail and calendar): their own places, where their own values may go.
ACCOUNTS = {"banking": [BANK], "workspace": [MAIL, CALENDAR, DRIVE], "travel": [BOOKING, MAIL, CALENDAR],
            "slack": [SLACK]}


def own_details(suite: str, env) -> list[str]:
    """The user's own details in the suite's environment, and their accounts on its sites."""
    return [*_details(suite, env), *ACCOUNTS.get(suite, [])]


def _details(suite: str, env) -> list[str]:
    if suite == "banking":
        u = env.user_account
        return [env.bank_account.iban, u.first_name, u.last_name, f"{u.first_name} {u.last_name}", u.street, u.city]
    if suite == "workspace":
        me = env.inbox.account_email
        return [me, *[c.name for c in env.inbox.contact_list if c.email == me]]
    if suite == "travel":
        u = env.user
        return [f"{u.first_name} {u.last_name}", u.first_name, u.last_name, u.email, u.phone_number, u.address,
                u.ID_number, u.passport_number, u.bank_account_number, u.credit_card_number]
    return []  # slack: the agent posts as "bot"; the environment names no user of its own


def task_order(tasks: dict) -> list:
    return sorted(tasks.items(), key=lambda item: int(item[0].rsplit("_", 1)[1]))


def export_suite(name: str, suite, problems: list, pair_with_writes: bool) -> tuple[list[dict], Counter]:
    cases: list[dict] = []
    counts: Counter = Counter()
    base = suite.load_and_inject_default_environment({})
    own = own_details(name, base)
    grants: dict[str, list] = {}
    for task_id, task in task_order(suite.user_tasks):
        env = task.init_environment(base.model_copy(deep=True))
        scenario = Scenario(name, task.PROMPT, own)
        run_calls(scenario, task.ground_truth(env.model_copy(deep=True)), env, FunctionsRuntime(suite.tools),
                  writes=True, problems=problems)
        grants[task_id] = scenario.grants()
        if scenario.calls:
            cases += scenario.cases(f"benign/{name}/{task_id}", grants[task_id])
            counts["benign"] += 1
        else:
            counts["benign_read_only"] += 1

    pipeline = GroundTruthPipeline(None)
    pipeline.name = MODEL_PIPELINE
    attack = ImportantInstructionsAttack(suite, pipeline)
    paired = None
    for task_id, task in task_order(suite.user_tasks):
        if pair_with_writes and not grants[task_id]:
            continue
        try:
            attack.get_injection_candidates(task)
        except ValueError:
            continue
        paired = (task_id, task)
        break
    if paired is None:
        problems.append(f"{name}: no user task reads an injection vector; pairing with the first")
        paired = task_order(suite.user_tasks)[0]
    user_id, user_task = paired
    for inj_id, inj_task in task_order(suite.injection_tasks):
        try:
            injections = attack.attack(user_task, inj_task)
        except ValueError:
            injections = {}
        env = user_task.init_environment(suite.load_and_inject_default_environment(injections))
        pre = env.model_copy(deep=True)
        scenario = Scenario(name, user_task.PROMPT, own)
        runtime = FunctionsRuntime(suite.tools)
        run_calls(scenario, user_task.ground_truth(pre.model_copy(deep=True)), env, runtime, writes=False,
                  problems=problems)
        run_calls(scenario, inj_task.ground_truth(pre.model_copy(deep=True)), env, runtime, writes=True,
                  problems=problems)
        if scenario.calls:
            cases += scenario.cases(f"attack/{name}/{inj_id}@{user_id}", grants[user_id])
            counts["attack"] += 1
        else:
            problems.append(f"{name}: {inj_id} has no write in its ground truth (skipped)")
            counts["attack_without_writes"] += 1
    return cases, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("agentdojo_cases.jsonl"))
    parser.add_argument("--version", default=BENCHMARK_VERSION, help="agentdojo benchmark version")
    parser.add_argument("--pair-with-writes", action="store_true",
                        help="pair each injection task with the first injectable user task that also writes "
                             "(so the attack runs under that task's grants); default: the first injectable one")
    args = parser.parse_args(argv)
    problems: list[str] = []
    lines: list[str] = []
    for name, suite in sorted(get_suites(args.version).items()):
        cases, counts = export_suite(name, suite, problems, args.pair_with_writes)
        lines += [json.dumps(case, ensure_ascii=False) for case in cases]
        print(f"{name}: {dict(counts)}, {len(cases)} cases", file=sys.stderr)
    args.out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} cases -> {args.out} (agentdojo {args.version}); longest line {max(map(len, lines))} chars",
          file=sys.stderr)
    for problem in problems:
        print(f"note: {problem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
