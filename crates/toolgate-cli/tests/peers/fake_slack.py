"""A local fake of the Slack Web API and of Slack's interactivity requests, for the
approval-channel tests (standard library only).

Usage: fake_slack.py --token xoxb-... --signing-secret SECRET --channel C123[:name] [--channel ...]
                     [--user U1 ...] [--state FILE]
(--user: the channel members; with any given, chat.postEphemeral to anyone else is
user_not_in_channel.)

Listens on 127.0.0.1 on a free port, prints one line {"port": N} once listening and runs until
killed. With --state FILE the messages, ephemeral messages, response_url posts and the last
click are written to FILE after every change and read back at start.

Web API: POST /api/<method> (GET with query arguments too), token as "Authorization: Bearer" or a
token form/query field (not a JSON body field, as in Slack); bodies form-encoded, multipart or JSON.
Answers are HTTP 200 {"ok": true, ...} or {"ok": false, "error": "..."} (invalid_blocks adds
"errors" and response_metadata.messages with json-pointers, as Slack does); a JSON body whose
Content-Type has no charset gets the "missing_charset" warning.
Methods: auth.test, chat.postMessage, chat.update, chat.delete, chat.postEphemeral,
conversations.info.
Blocks are checked as Slack does (see check_blocks); blocks and buttons without block_id or
action_id get generated ones, and chat.update without a blocks argument keeps the old blocks.

Test control (no token), all JSON:
  GET  /_test/messages   [{channel, ts, text, blocks, thread_ts, deleted, updates: [{text, blocks,
                           via ("chat.update" | "response_url")}], message}] (message: as Slack
                           stores it now, the form a block_actions payload carries)
  GET  /_test/ephemeral  [{channel, user, text, blocks, message_ts, via}]
  GET  /_test/responses  [{response_url, channel, ts, user_id, content_type, body}]
  GET  /_test/calls      {method: number of calls that reached it}
  GET  /_test/requests   [{method, content_type, params, status}] (last 500)
  POST /_test/outage     {ms} -> {}: for ms milliseconds every Web API call closes the connection
                           without an answer
  POST /_test/ratelimit  {method, count?: 1, retry_after?: 1} -> {}: the next count calls answer
                           HTTP 429 with Retry-After and {"ok": false, "error": "ratelimited"}
  POST /_test/click      {url, channel, ts, user_id, user_name?, action_id, value?, block_id?,
                          state?: {block_id: {action_id: {"type": "plain_text_input", "value"}}},
                          timestamp_offset?: seconds, bad_signature?: bool, replay?: bool,
                          force?: bool}
                          -> {status, body, elapsed_ms, error, request: {timestamp, signature,
                              body, payload}}
     Sends a signed block_actions payload to url as Slack does. The button must be on the
     message now (value defaults to its value and must match it) unless force is true (a stale
     client or a forged request). replay: the last click's request again, byte for byte.
     status is null (and error set) when url gave no HTTP answer.
  POST /_test/event      {url, type: "app_mention" | "message", channel, user, text,
                          thread_ts?, channel_type?: "channel" | "im", event_id?, retry?: n}
                          -> {status, body, event_id, ts, request: {timestamp, signature, body}}
     A user's message, recorded in the channel (with a new ts), then delivered as Slack's
     Events API does: a signed JSON event_callback envelope POSTed to url (retry: the
     X-Slack-Retry-Num header, as Slack's redeliveries; event_id: reuse one).
  POST /_test/url_verification  {url} -> {status, body, challenge}: the Request URL's
                          signed handshake.
  POST /_test/response/<n>  the response_url given in click n (as Slack's): JSON {text?, blocks?,
                          replace_original?, delete_original?, response_type?}; replace_original
                          edits the message, delete_original deletes it, otherwise the text is an
                          ephemeral message to the clicking user. Answers {"ok": true}.
"""

import argparse
import email.parser
import email.policy
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

METHODS = ("auth.test", "chat.postMessage", "chat.update", "chat.delete", "chat.postEphemeral", "conversations.info")
TEAM = {"id": "T0TOOLGATE", "domain": "toolgate-test"}
BOT_USER = "U0TGBOT01"
BOT_ID = "B0TGBOT01"
APP_ID = "A0TGAPP01"
TEXT_LIMIT = 40000


class SlackError(Exception):
    def __init__(self, error, **extra):
        super().__init__(error)
        self.error = error
        self.extra = extra


class Drop(Exception):
    pass


def read_body(handler):
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        out = b""
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return out
            out += handler.rfile.read(size)
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


# ---------------------------------------------------------------------------------------------
# Block Kit checks (the subset of Slack's schema an approval message uses, plus the common rest)

class Blocks:
    def __init__(self):
        self.errors = []

    def err(self, msg, ptr):
        self.errors.append(f"{msg} [json-pointer:{ptr}]")

    def string(self, v, ptr, max_len, min_len=1, required=True):
        if v is None:
            if required:
                self.err("missing required field: " + ptr.rsplit("/", 1)[1], ptr.rsplit("/", 1)[0])
            return
        if not isinstance(v, str):
            self.err("must be a string", ptr)
        elif len(v) < min_len:
            self.err(f"must be more than {min_len - 1} characters", ptr)
        elif len(v) > max_len:
            self.err(f"must be less than {max_len + 1} characters", ptr)

    def text(self, obj, ptr, max_len, plain_only=False, required=True):
        if obj is None:
            if required:
                self.err("missing required field: " + ptr.rsplit("/", 1)[1], ptr.rsplit("/", 1)[0])
            return
        if not isinstance(obj, dict):
            self.err("must provide an object", ptr)
            return
        t = obj.get("type")
        if t not in (("plain_text",) if plain_only else ("plain_text", "mrkdwn")):
            self.err("must be a valid enum value", ptr + "/type")
            return
        self.string(obj.get("text"), ptr + "/text", max_len)
        if "emoji" in obj and t != "plain_text":
            self.err("unsupported type for field: emoji", ptr + "/emoji")
        if "verbatim" in obj and t != "mrkdwn":
            self.err("unsupported type for field: verbatim", ptr + "/verbatim")

    def confirm(self, obj, ptr):
        if not isinstance(obj, dict):
            self.err("must provide an object", ptr)
            return
        self.text(obj.get("title"), ptr + "/title", 100, plain_only=True)
        self.text(obj.get("text"), ptr + "/text", 300)
        self.text(obj.get("confirm"), ptr + "/confirm", 30, plain_only=True)
        self.text(obj.get("deny"), ptr + "/deny", 30, plain_only=True)
        if obj.get("style") not in (None, "primary", "danger"):
            self.err("must be a valid enum value", ptr + "/style")

    def element(self, el, ptr, action_ids, allowed):
        if not isinstance(el, dict):
            self.err("must provide an object", ptr)
            return
        t = el.get("type")
        if t not in allowed:
            self.err("must be a valid enum value", ptr + "/type")
            return
        if t in ("image",):
            self.string(el.get("alt_text"), ptr + "/alt_text", 2000)
            return
        if "action_id" in el:
            self.string(el["action_id"], ptr + "/action_id", 255)
            if el["action_id"] in action_ids:
                self.err("action_id already exists", ptr + "/action_id")
            action_ids.add(el["action_id"])
        if t == "button":
            self.text(el.get("text"), ptr + "/text", 75, plain_only=True)
            if "value" in el:
                self.string(el["value"], ptr + "/value", 2000)
            if "url" in el:
                self.string(el["url"], ptr + "/url", 3000)
            if el.get("style") not in (None, "primary", "danger"):
                self.err("must be a valid enum value", ptr + "/style")
            if "confirm" in el:
                self.confirm(el["confirm"], ptr + "/confirm")
            if "accessibility_label" in el:
                self.string(el["accessibility_label"], ptr + "/accessibility_label", 75)
        elif t == "plain_text_input":
            if "placeholder" in el:
                self.text(el["placeholder"], ptr + "/placeholder", 150, plain_only=True)
            if "initial_value" in el and not isinstance(el["initial_value"], str):
                self.err("must be a string", ptr + "/initial_value")
            for k, lo, hi in (("min_length", 0, 3000), ("max_length", 1, 3000)):
                if k in el and not (isinstance(el[k], int) and lo <= el[k] <= hi):
                    self.err(f"must be between {lo} and {hi}", ptr + "/" + k)
        elif t in ("static_select", "multi_static_select"):
            opts = el.get("options")
            if opts is None and el.get("option_groups") is None:
                self.err("must provide either options or option_groups", ptr)
            elif opts is not None and (not isinstance(opts, list) or not 1 <= len(opts) <= 100):
                self.err("must provide between 1 and 100 items", ptr + "/options")
        if "placeholder" in el and t != "plain_text_input":
            self.text(el["placeholder"], ptr + "/placeholder", 150, plain_only=True)

    def check(self, blocks):
        if not isinstance(blocks, list):
            self.err("must provide an array", "/blocks")
            return
        if len(blocks) > 50:
            self.err("must provide no more than 50 items", "/blocks")
        block_ids = set()
        interactive = (
            "button", "static_select", "multi_static_select", "users_select", "multi_users_select",
            "conversations_select", "channels_select", "external_select", "overflow", "datepicker",
            "timepicker", "datetimepicker", "checkboxes", "radio_buttons",
        )
        inputs = interactive + ("plain_text_input", "email_text_input", "url_text_input", "number_input", "rich_text_input")
        for i, b in enumerate(blocks):
            ptr = f"/blocks/{i}"
            if not isinstance(b, dict):
                self.err("must provide an object", ptr)
                continue
            t = b.get("type")
            if "block_id" in b:
                self.string(b["block_id"], ptr + "/block_id", 255)
                if b["block_id"] in block_ids:
                    self.err("duplicate block_id", ptr + "/block_id")
                block_ids.add(b["block_id"])
            action_ids = set()
            if t == "section":
                if "text" not in b and "fields" not in b:
                    self.err("must provide either text or fields", ptr)
                if "text" in b:
                    self.text(b["text"], ptr + "/text", 3000)
                if "fields" in b:
                    f = b["fields"]
                    if not isinstance(f, list) or not 1 <= len(f) <= 10:
                        self.err("must provide between 1 and 10 items", ptr + "/fields")
                    else:
                        for j, x in enumerate(f):
                            self.text(x, f"{ptr}/fields/{j}", 2000)
                if "accessory" in b:
                    self.element(b["accessory"], ptr + "/accessory", action_ids, interactive + ("image",))
            elif t == "actions":
                els = b.get("elements")
                if not isinstance(els, list) or not els:
                    self.err("must provide at least 1 item", ptr + "/elements")
                    continue
                if len(els) > 25:
                    self.err("must provide no more than 25 items", ptr + "/elements")
                for j, el in enumerate(els):
                    self.element(el, f"{ptr}/elements/{j}", action_ids, interactive + ("rich_text_input",))
            elif t == "input":
                self.text(b.get("label"), ptr + "/label", 2000, plain_only=True)
                if "hint" in b:
                    self.text(b["hint"], ptr + "/hint", 2000, plain_only=True)
                if b.get("element") is None:
                    self.err("missing required field: element", ptr)
                else:
                    self.element(b["element"], ptr + "/element", action_ids, inputs)
                for k in ("optional", "dispatch_action"):
                    if k in b and not isinstance(b[k], bool):
                        self.err("must be a boolean", ptr + "/" + k)
            elif t == "context":
                els = b.get("elements")
                if not isinstance(els, list) or not 1 <= len(els) <= 10:
                    self.err("must provide between 1 and 10 items", ptr + "/elements")
                    continue
                for j, el in enumerate(els):
                    p = f"{ptr}/elements/{j}"
                    if isinstance(el, dict) and el.get("type") == "image":
                        self.element(el, p, action_ids, ("image",))
                    else:
                        self.text(el, p, 3000)
            elif t == "header":
                self.text(b.get("text"), ptr + "/text", 150, plain_only=True)
            elif t == "divider":
                pass
            elif t == "image":
                self.string(b.get("image_url"), ptr + "/image_url", 3000, required=False)
                self.string(b.get("alt_text"), ptr + "/alt_text", 2000)
            elif t == "markdown":
                self.string(b.get("text"), ptr + "/text", 12000)
            elif t == "rich_text":
                if not isinstance(b.get("elements"), list):
                    self.err("must provide an array", ptr + "/elements")
            else:
                self.err("must be a valid enum value", ptr + "/type")


def normalize_blocks(blocks):
    """What Slack stores: generated block_id / action_id where missing, emoji on plain_text."""
    out = json.loads(json.dumps(blocks))

    def texts(o):
        if isinstance(o, dict):
            if o.get("type") == "plain_text" and "text" in o and "emoji" not in o:
                o["emoji"] = True
            for v in o.values():
                texts(v)
        elif isinstance(o, list):
            for v in o:
                texts(v)

    def gen(n):
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "".join(secrets.choice(alphabet) for _ in range(n))

    for b in out:
        if "block_id" not in b:
            b["block_id"] = gen(5)
        els = list(b.get("elements") or []) if b.get("type") == "actions" else []
        for k in ("accessory", "element"):
            if isinstance(b.get(k), dict):
                els.append(b[k])
        for el in els:
            if isinstance(el, dict) and el.get("type") not in ("image",) and "action_id" not in el:
                el["action_id"] = gen(5)
    texts(out)
    return out


def buttons(blocks):
    for b in blocks or []:
        els = list(b.get("elements") or []) if b.get("type") == "actions" else []
        if isinstance(b.get("accessory"), dict):
            els.append(b["accessory"])
        for el in els:
            if isinstance(el, dict) and el.get("type") == "button":
                yield b.get("block_id"), el


# ---------------------------------------------------------------------------------------------

class Slack:
    def __init__(self, args):
        self.token = args.token
        self.secret = args.signing_secret
        self.channels = {}
        for c in args.channel:
            cid, _, name = c.partition(":")
            self.channels[cid] = name or f"approvals-{cid.lower()}"
        self.users = set(args.user)
        self.state_file = args.state
        self.lock = threading.Lock()
        self.state = {
            "messages": {},  # "channel:ts" -> record
            "seq": 100,
            "ephemeral": [],
            "responses": [],
            "response_urls": {},  # n -> {channel, ts, user_id}
            "clicks": 0,
            "last_click": None,  # {url, body, headers}
        }
        if self.state_file and os.path.exists(self.state_file):
            with open(self.state_file) as f:
                self.state.update(json.load(f))
        self.calls = {}
        self.requests = []
        self.outage_until = 0.0
        self.rate_limits = {}
        self.port = None

    def save(self):
        if not self.state_file:
            return
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_file)

    def new_ts(self):
        self.state["seq"] += 1
        return f"{int(time.time())}.{self.state['seq']:06d}"

    def channel(self, p):
        c = p.get("channel")
        if not c:
            raise SlackError("channel_not_found")
        c = str(c)
        if c in self.channels:
            return c
        name = c.lstrip("#")
        for cid, cname in self.channels.items():
            if cname == name:
                return cid
        raise SlackError("channel_not_found")

    @staticmethod
    def blocks_arg(p):
        """-> (present, blocks)"""
        if "blocks" not in p or p["blocks"] is None:
            return False, None
        raw = p["blocks"]
        if isinstance(raw, str):
            if raw.strip() == "":
                return False, None
            try:
                raw = json.loads(raw)
            except ValueError:
                raise SlackError("invalid_blocks_format") from None
        if not isinstance(raw, list):
            raise SlackError("invalid_blocks_format")
        v = Blocks()
        v.check(raw)
        if v.errors:
            raise SlackError(
                "invalid_blocks", errors=v.errors,
                response_metadata={"messages": ["[ERROR] " + e for e in v.errors]},
            )
        return True, normalize_blocks(raw)

    @staticmethod
    def text_arg(p, required_unless_blocks):
        text = p.get("text")
        if text is not None and not isinstance(text, str):
            text = str(text)
        if text is not None and len(text) > TEXT_LIMIT:
            raise SlackError("msg_too_long")
        return text

    def message_obj(self, rec):
        if rec.get("user"):
            m = {"user": rec["user"], "type": "message", "ts": rec["ts"], "text": rec["text"], "team": TEAM["id"]}
            if rec.get("thread_ts"):
                m["thread_ts"] = rec["thread_ts"]
            return m
        m = {
            "user": BOT_USER,
            "type": "message",
            "ts": rec["ts"],
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "text": rec["text"],
            "team": TEAM["id"],
            "bot_profile": {
                "id": BOT_ID, "app_id": APP_ID, "name": "toolgate", "deleted": False,
                "team_id": TEAM["id"], "updated": 1700000000,
                "icons": {"image_36": "https://example.com/36.png"},
            },
        }
        if rec.get("blocks"):
            m["blocks"] = rec["blocks"]
        if rec.get("thread_ts"):
            m["thread_ts"] = rec["thread_ts"]
        if rec.get("edited"):
            m["edited"] = {"user": BOT_USER, "ts": rec["edited"]}
        return m

    # -- methods ---------------------------------------------------------------------------
    def m_auth_test(self, p):
        return {
            "url": f"https://{TEAM['domain']}.example.com/", "team": "toolgate test",
            "user": "toolgate", "team_id": TEAM["id"], "user_id": BOT_USER, "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def m_chat_postMessage(self, p):
        cid = self.channel(p)
        present, blocks = self.blocks_arg(p)
        text = self.text_arg(p, True)
        if not text and not blocks and not p.get("attachments"):
            raise SlackError("no_text")
        rec = {
            "channel": cid, "ts": self.new_ts(), "text": text or "", "blocks": blocks,
            "thread_ts": p.get("thread_ts"), "deleted": False, "updates": [],
        }
        self.state["messages"][f"{cid}:{rec['ts']}"] = rec
        self.save()
        return {"channel": cid, "ts": rec["ts"], "message": self.message_obj(rec)}

    def find(self, cid, ts):
        rec = self.state["messages"].get(f"{cid}:{ts}")
        if rec is None or rec["deleted"]:
            raise SlackError("message_not_found")
        return rec

    def apply_update(self, rec, text, present, blocks, via):
        if text is not None:
            rec["text"] = text
        if present:
            rec["blocks"] = blocks or None
        rec["edited"] = f"{int(time.time())}.000000"
        rec["updates"].append({"text": rec["text"], "blocks": rec["blocks"], "via": via})
        self.save()

    def m_chat_update(self, p):
        cid = self.channel(p)
        if not p.get("ts"):
            raise SlackError("message_not_found")
        rec = self.find(cid, str(p["ts"]))
        present, blocks = self.blocks_arg(p)
        text = self.text_arg(p, False)
        if text is None and not present and not p.get("attachments"):
            raise SlackError("no_text")
        self.apply_update(rec, text, present, blocks, "chat.update")
        return {"channel": cid, "ts": rec["ts"], "text": rec["text"], "message": self.message_obj(rec)}

    def m_chat_delete(self, p):
        cid = self.channel(p)
        if not p.get("ts"):
            raise SlackError("message_not_found")
        rec = self.find(cid, str(p["ts"]))
        rec["deleted"] = True
        self.save()
        return {"channel": cid, "ts": rec["ts"]}

    def sign(self, raw):
        ts = str(int(time.time()))
        sig = "v0=" + hmac.new(self.secret.encode(), b"v0:" + ts.encode() + b":" + raw, hashlib.sha256).hexdigest()
        return {
            "Content-Type": "application/json",
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sig,
        }

    def build_event(self, body):
        cid = body["channel"]
        if cid not in self.channels:
            raise ValueError(f"no channel {cid}")
        kind = body.get("type", "app_mention")
        if kind not in ("app_mention", "message"):
            raise ValueError("type is app_mention or message")
        text = body.get("text") or ""
        ts = self.new_ts()
        rec = {"channel": cid, "ts": ts, "text": text, "blocks": None, "thread_ts": body.get("thread_ts"),
               "deleted": False, "updates": [], "user": body["user"]}
        self.state["messages"][f"{cid}:{ts}"] = rec
        event = {
            "type": kind, "user": body["user"], "text": text, "ts": ts, "channel": cid,
            "event_ts": ts, "team": TEAM["id"],
            "blocks": [{"type": "rich_text", "block_id": secrets.token_hex(3), "elements": [
                {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}],
        }
        if body.get("thread_ts"):
            event["thread_ts"] = body["thread_ts"]
        if kind == "message":
            event["channel_type"] = body.get("channel_type", "channel")
        event_id = body.get("event_id") or "Ev" + secrets.token_hex(5).upper()
        envelope = {
            "token": "Shh_legacy_verification_token", "team_id": TEAM["id"], "api_app_id": APP_ID,
            "event": event, "type": "event_callback", "event_id": event_id,
            "event_time": int(time.time()), "event_context": "4-" + secrets.token_hex(12),
            "authorizations": [{"enterprise_id": None, "team_id": TEAM["id"], "user_id": BOT_USER,
                                "is_bot": True, "is_enterprise_install": False}],
            "is_ext_shared_channel": False,
        }
        raw = json.dumps(envelope, separators=(",", ":")).encode()
        headers = self.sign(raw)
        if body.get("retry"):
            headers["X-Slack-Retry-Num"] = str(int(body["retry"]))
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        self.save()
        return body["url"], raw, headers, event_id, ts

    def m_chat_postEphemeral(self, p):
        cid = self.channel(p)
        user = p.get("user")
        if not user:
            raise SlackError("user_not_found")
        if self.users and user not in self.users:
            raise SlackError("user_not_in_channel")
        present, blocks = self.blocks_arg(p)
        text = self.text_arg(p, True)
        if not text and not blocks and not p.get("attachments"):
            raise SlackError("no_text")
        ts = self.new_ts()
        self.state["ephemeral"].append(
            {"channel": cid, "user": user, "text": text or "", "blocks": blocks, "message_ts": ts,
             "thread_ts": p.get("thread_ts"), "via": "chat.postEphemeral"}
        )
        self.save()
        return {"message_ts": ts}

    def m_conversations_info(self, p):
        cid = self.channel(p)
        name = self.channels[cid]
        return {
            "channel": {
                "id": cid, "name": name, "is_channel": True, "is_group": False, "is_im": False,
                "is_mpim": False, "is_private": False, "created": 1700000000, "is_archived": False,
                "is_general": False, "unlinked": 0, "name_normalized": name, "is_shared": False,
                "is_org_shared": False, "is_pending_ext_shared": False, "pending_shared": [],
                "context_team_id": TEAM["id"], "updated": 1700000000000, "parent_conversation": None,
                "creator": "U0TGADMIN", "is_ext_shared": False, "shared_team_ids": [TEAM["id"]],
                "pending_connected_team_ids": [], "is_member": True,
                "topic": {"value": "", "creator": "", "last_set": 0},
                "purpose": {"value": "toolgate approvals", "creator": "U0TGADMIN", "last_set": 1700000000},
                "previous_names": [],
            }
        }

    # -- interactivity ---------------------------------------------------------------------
    def build_click(self, body):
        """-> (url, raw body, headers, payload); called with the lock held."""
        url = body["url"]
        cid = str(body["channel"])
        if cid not in self.channels:
            raise ValueError(f"unknown channel {cid}")
        rec = self.state["messages"].get(f"{cid}:{body['ts']}")
        if rec is None or rec["deleted"]:
            raise ValueError("no such message")
        action_id = body["action_id"]
        found = None
        for block_id, el in buttons(rec.get("blocks")):
            if el.get("action_id") == action_id and body.get("block_id") in (None, block_id):
                found = (block_id, el)
                break
        force = bool(body.get("force"))
        if found is None and not force:
            raise LookupError(f"the message shows no button with action_id {action_id!r} (force: true to send anyway)")
        block_id, el = found or (body.get("block_id") or "forged", {"text": {"type": "plain_text", "text": "?", "emoji": True}})
        value = body["value"] if "value" in body else el.get("value")
        if found and "value" in body and value != el.get("value") and not force:
            raise LookupError(f"the button's value is {el.get('value')!r}, not {value!r} (force: true to send anyway)")
        user_id = body["user_id"]
        user_name = body.get("user_name") or user_id.lower()
        values = {}
        for b in rec.get("blocks") or []:
            if b.get("type") == "input" and isinstance(b.get("element"), dict):
                e = b["element"]
                values.setdefault(b["block_id"], {})[e.get("action_id")] = {"type": e.get("type"), "value": None}
        for bid, acts in (body.get("state") or {}).items():
            for aid, v in acts.items():
                values.setdefault(bid, {})[aid] = v
        self.state["clicks"] += 1
        n = str(self.state["clicks"])
        response_url = f"http://127.0.0.1:{self.port}/_test/response/{n}"
        self.state["response_urls"][n] = {"channel": cid, "ts": rec["ts"], "user_id": user_id}
        action = {
            "action_id": action_id, "block_id": block_id, "text": el.get("text"), "value": value,
            "type": "button", "action_ts": f"{time.time():.6f}",
        }
        if el.get("style"):
            action["style"] = el["style"]
        payload = {
            "type": "block_actions",
            "user": {"id": user_id, "username": user_name, "name": user_name, "team_id": TEAM["id"]},
            "api_app_id": APP_ID,
            "token": "Shh_legacy_verification_token",
            "container": {"type": "message", "message_ts": rec["ts"], "channel_id": cid, "is_ephemeral": False},
            "trigger_id": f"{int(time.time())}{n}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}",
            "team": dict(TEAM),
            "enterprise": None,
            "is_enterprise_install": False,
            "channel": {"id": cid, "name": self.channels[cid]},
            "message": self.message_obj(rec),
            "state": {"values": values},
            "response_url": response_url,
            "actions": [action],
        }
        raw = urllib.parse.urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode()
        ts = str(int(time.time()) + int(body.get("timestamp_offset", 0)))
        sig = "v0=" + hmac.new(self.secret.encode(), b"v0:" + ts.encode() + b":" + raw, hashlib.sha256).hexdigest()
        if body.get("bad_signature"):
            sig = "v0=" + hmac.new(b"not-the-secret", b"v0:" + ts.encode() + b":" + raw, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sig,
        }
        self.state["last_click"] = {"url": url, "body": raw.decode(), "headers": headers}
        self.save()
        return url, raw, headers, payload

    @staticmethod
    def send(url, raw, headers):
        started = time.time()
        req = urllib.request.Request(url, data=raw, headers=headers, method="POST")
        status, text, error = None, "", None
        try:
            with urllib.request.urlopen(req, timeout=15) as resp:
                status, text = resp.status, resp.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode("utf-8", "replace")
        except Exception as e:
            error = f"{type(e).__name__}: {e}"
        return {"status": status, "body": text, "error": error, "elapsed_ms": int((time.time() - started) * 1000)}

    def response_post(self, n, ctype, raw):
        target = self.state["response_urls"].get(n)
        if target is None:
            raise SlackError("invalid_response_url")
        try:
            if ctype.startswith("application/json"):
                body = json.loads(raw or b"{}")
            else:
                form = dict(urllib.parse.parse_qsl(raw.decode(), keep_blank_values=True))
                body = json.loads(form["payload"]) if "payload" in form else form
        except (ValueError, KeyError):
            raise SlackError("invalid_payload") from None
        self.state["responses"].append(
            {"response_url": f"http://127.0.0.1:{self.port}/_test/response/{n}", "channel": target["channel"],
             "ts": target["ts"], "user_id": target["user_id"], "content_type": ctype, "body": body}
        )
        present, blocks = self.blocks_arg(body)
        rec = self.state["messages"].get(f"{target['channel']}:{target['ts']}")
        if body.get("delete_original") in (True, "true") and rec:
            rec["deleted"] = True
        elif body.get("replace_original") in (True, "true") and rec:
            self.apply_update(rec, body.get("text"), True, blocks, "response_url")
        elif body.get("response_type") != "in_channel":
            self.state["ephemeral"].append(
                {"channel": target["channel"], "user": target["user_id"], "text": body.get("text", ""),
                 "blocks": blocks, "message_ts": self.new_ts(), "thread_ts": None, "via": "response_url"}
            )
        else:
            rec2 = {"channel": target["channel"], "ts": self.new_ts(), "text": body.get("text", ""),
                    "blocks": blocks, "thread_ts": None, "deleted": False, "updates": []}
            self.state["messages"][f"{rec2['channel']}:{rec2['ts']}"] = rec2
        self.save()

    def t_messages(self):
        out = []
        for rec in self.state["messages"].values():
            out.append(dict(rec, message=self.message_obj(rec)))
        return out  # in the order posted


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: Slack = None

    def log_message(self, *args):
        pass

    def send_json(self, status, obj, headers=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def route(self):
        split = urllib.parse.urlsplit(self.path)
        if split.path.startswith("/_test/"):
            return self.control(split.path[len("/_test/"):])
        m = re.match(r"/api/([A-Za-z0-9_.]+)$", split.path)
        raw = read_body(self)
        if not m:
            return self.send_json(404, {"ok": False, "error": "unknown_method"})
        f = self.fake
        method = m.group(1)
        ctype = self.headers.get("Content-Type", "")
        record = {"method": method, "content_type": ctype or None, "params": {}}
        with f.lock:
            f.calls[method] = f.calls.get(method, 0) + 1
            f.requests.append(record)
            del f.requests[:-500]
        warning = None
        try:
            params = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
            main = ctype.split(";")[0].strip().lower()
            json_body = False
            if raw:
                if main == "application/json":
                    json_body = True
                    if "charset" not in ctype.lower():
                        warning = "missing_charset"
                    try:
                        obj = json.loads(raw.decode("utf-8"))
                    except ValueError:
                        raise SlackError("invalid_json") from None
                    if not isinstance(obj, dict):
                        raise SlackError("json_not_object")
                    obj.pop("token", None)  # Slack takes no token from a JSON body
                    params.update(obj)
                elif main == "multipart/form-data":
                    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                        b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + raw
                    )
                    for part in msg.iter_parts():
                        name = part.get_param("name", header="content-disposition")
                        if name:
                            params[name] = (part.get_payload(decode=True) or b"").decode("utf-8", "replace")
                else:
                    params.update(urllib.parse.parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
            record["params"] = {k: v for k, v in params.items() if k != "token"}
            if time.time() < f.outage_until:
                raise Drop()
            if method not in METHODS:
                raise SlackError("unknown_method", req_method=method)
            auth = self.headers.get("Authorization", "")
            token = auth[7:].strip() if auth.lower().startswith("bearer ") else None
            if token is None and not json_body:
                token = params.get("token")
            if not token:
                raise SlackError("not_authed")
            if token != f.token:
                raise SlackError("invalid_auth")
            with f.lock:
                limit = f.rate_limits.get(method)
                if limit and limit[0] > 0:
                    limit[0] -= 1
                    record["status"] = 429
                    return self.send_json(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(limit[1])})
                result = getattr(f, "m_" + method.replace(".", "_"))(params)
            out = {"ok": True}
            out.update(result)
            if warning:
                out["warning"] = warning
                out["response_metadata"] = {"warnings": [warning]}
            record["status"] = 200
            record["ok"] = True
            self.send_json(200, out)
        except Drop:
            record["status"] = None
            self.close_connection = True
        except SlackError as e:
            out = {"ok": False, "error": e.error}
            out.update(e.extra)
            if warning:
                out["warning"] = warning
                out.setdefault("response_metadata", {})["warnings"] = [warning]
            record["status"] = 200
            record["ok"] = False
            record["error"] = e.error
            self.send_json(200, out)

    def control(self, what):
        f = self.fake
        raw = read_body(self)
        if what.startswith("response/") and self.command == "POST":
            with f.lock:
                try:
                    f.response_post(what.split("/", 1)[1], self.headers.get("Content-Type", ""), raw)
                except SlackError as e:
                    return self.send_json(404 if e.error == "invalid_response_url" else 400, {"ok": False, "error": e.error})
            return self.send_json(200, {"ok": True})
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return self.send_json(400, {"error": "body is not JSON"})
        if what in ("event", "url_verification") and self.command == "POST":
            try:
                with f.lock:
                    if what == "event":
                        url, data, headers, event_id, ts = f.build_event(body)
                    else:
                        challenge = secrets.token_urlsafe(24)
                        data = json.dumps({"token": "Shh_legacy_verification_token", "challenge": challenge,
                                           "type": "url_verification"}).encode()
                        url, headers = body["url"], f.sign(data)
            except (KeyError, ValueError, TypeError) as e:
                return self.send_json(400, {"error": f"{type(e).__name__}: {e}"})
            result = f.send(url, data, headers)
            if what == "event":
                result.update({"event_id": event_id, "ts": ts})
            else:
                result["challenge"] = challenge
            result["request"] = {"timestamp": headers["X-Slack-Request-Timestamp"],
                                 "signature": headers["X-Slack-Signature"], "body": data.decode()}
            return self.send_json(200, result)
        if what == "click" and self.command == "POST":
            try:
                with f.lock:
                    if body.get("replay"):
                        last = f.state["last_click"]
                        if not last:
                            raise ValueError("no click to replay")
                        url, data, headers, payload = last["url"], last["body"].encode(), last["headers"], None
                    else:
                        url, data, headers, payload = f.build_click(body)
            except LookupError as e:
                return self.send_json(409, {"error": str(e)})
            except (KeyError, ValueError, TypeError) as e:
                return self.send_json(400, {"error": f"{type(e).__name__}: {e}"})
            result = f.send(url, data, headers)  # without the lock: the receiver may call us back
            result["request"] = {
                "timestamp": headers["X-Slack-Request-Timestamp"], "signature": headers["X-Slack-Signature"],
                "body": data.decode(), "payload": payload,
            }
            return self.send_json(200, result)
        with f.lock:
            if what == "messages":
                return self.send_json(200, f.t_messages())
            if what == "ephemeral":
                return self.send_json(200, f.state["ephemeral"])
            if what == "responses":
                return self.send_json(200, f.state["responses"])
            if what == "calls":
                return self.send_json(200, f.calls)
            if what == "requests":
                return self.send_json(200, f.requests)
            if self.command == "POST" and what == "outage":
                f.outage_until = time.time() + float(body.get("ms", 0)) / 1000.0
                return self.send_json(200, {})
            if self.command == "POST" and what == "ratelimit":
                f.rate_limits[body["method"]] = [int(body.get("count", 1)), int(body.get("retry_after", 1))]
                return self.send_json(200, {})
        return self.send_json(404, {"error": "unknown control endpoint"})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--token", required=True)
    ap.add_argument("--signing-secret", required=True)
    ap.add_argument("--channel", action="append", default=[], required=True)
    ap.add_argument("--user", action="append", default=[])
    ap.add_argument("--state")
    args = ap.parse_args()
    fake = Slack(args)
    Handler.fake = fake
    server = Server(("127.0.0.1", 0), Handler)
    fake.port = server.server_address[1]
    print(json.dumps({"port": fake.port}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
