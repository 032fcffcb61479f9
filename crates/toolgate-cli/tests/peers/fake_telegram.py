"""A local fake of the Telegram Bot API for the approval-channel tests (standard library only).

Usage: fake_telegram.py --token TOKEN --chat ID [--chat ID ...] [--bot-id N]
                        [--bot-username NAME] [--state FILE]

Listens on 127.0.0.1 on a free port, prints one line {"port": N} once listening and runs until
killed. With --state FILE the state (messages, pending updates, the update counter, the webhook,
callback queries and their answers) is written to FILE after every change and read back at start,
so a test can kill and restart the fake.

Bot API: /bot<TOKEN>/<method>, GET or POST; parameters in the query string and/or the body
(application/x-www-form-urlencoded, multipart/form-data or JSON). Method names are
case-insensitive as in Telegram. Every answer is {"ok": true, "result": ...} or
{"ok": false, "error_code": N, "description": "..."} with the HTTP status N.
Methods: getMe, sendMessage, editMessageText, editMessageReplyMarkup, deleteMessage,
answerCallbackQuery, getUpdates, setWebhook, deleteWebhook, getWebhookInfo, getChat.
parse_mode HTML, MarkdownV2 and Markdown are parsed as Telegram does (entities with UTF-16
offsets, "Bad Request: can't parse entities: ..." on bad markup); the 4096 limit is counted in
UTF-16 code units of the text after parsing, after trimming surrounding whitespace.

Test control (no token), all JSON:
  GET  /_test/messages    [{chat_id, message_id, text, raw_text, parse_mode, reply_markup, date,
                            edit_date, deleted, edits: [{text, raw_text, reply_markup, date,
                            message}], message}]  (message: the Bot API Message as now)
  POST /_test/tap         {chat_id, message_id, from_id, from_username?, from_first_name?, data,
                           force?} -> {update_id, callback_query_id}; the message must still show
                           a button with that callback_data unless force is true (a stale client)
  POST /_test/reply       {chat_id, reply_to_message_id, from_id, from_username?, text}
                           -> {update_id, message_id}
  POST /_test/say         {chat_id, from_id, from_username?, text, reply_to_message_id?}
                           -> {update_id, message_id}: a user's text message (in a private chat
                           chat_id is the user's id); @mentions and a leading /command get their
                           entities as Telegram sets them
  GET  /_test/answers     [{callback_query_id, text, show_alert, url, cache_time}]
  GET  /_test/deliveries  [{update_id, attempt, status, error}]  (status null: no HTTP answer)
  GET  /_test/updates     every update made so far, in order
  POST /_test/outage      {ms} -> {}: for ms milliseconds every Bot API call (and a waiting
                           getUpdates) is dropped: the connection closes without an answer
  POST /_test/ratelimit   {method, count?: 1, retry_after?: 1} -> {}: the next count calls of
                           method answer 429 "Too Many Requests: retry after N"
  GET  /_test/calls       {method: number of calls that reached it, outage and errors included}
  GET  /_test/requests    [{method, http_method, content_type, params, status}] (last 500)
"""

import argparse
import email.parser
import email.policy
import json
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
INLINE_BUTTON_FIELDS = (
    "url", "callback_data", "web_app", "login_url", "switch_inline_query",
    "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
    "callback_game", "pay",
)
METHODS = (
    "getMe", "sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage",
    "answerCallbackQuery", "getUpdates", "setWebhook", "deleteWebhook", "getWebhookInfo", "getChat",
)
CANONICAL = {m.lower(): m for m in METHODS}
DEFAULT_ALLOWED = {"message_reaction", "message_reaction_count", "chat_member"}  # off by default


class ApiError(Exception):
    def __init__(self, code, description, parameters=None):
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters


def bad(description):
    return ApiError(400, "Bad Request: " + description)


class Drop(Exception):
    """Close the connection without an answer."""


class Refused(Exception):
    """A control request a real user could not make (answered 409)."""


# ---------------------------------------------------------------------------------------------
# Text and entities

def u16len(s):
    return len(s.encode("utf-16-le")) // 2


def byte_offset(s, i):
    return len(s[:i].encode("utf-8"))


class Builder:
    """Plain text plus entities with UTF-16 offsets."""

    def __init__(self):
        self.parts = []
        self.pos = 0
        self.entities = []

    def add(self, text):
        self.parts.append(text)
        self.pos += u16len(text)

    def entity(self, etype, start, **extra):
        if self.pos > start:
            e = {"type": etype, "offset": start, "length": self.pos - start}
            e.update({k: v for k, v in extra.items() if v is not None})
            self.entities.append(e)

    def done(self):
        text = "".join(self.parts)
        return trim(text, self.entities)


def trim(text, entities):
    """Telegram drops leading and trailing whitespace; entities are clipped to what is left."""
    stripped = text.strip()
    lead = u16len(text[: len(text) - len(text.lstrip())])
    end = lead + u16len(stripped)
    out = []
    for e in entities:
        s = max(e["offset"], lead)
        t = min(e["offset"] + e["length"], end)
        if t > s:
            e = dict(e, offset=s - lead, length=t - s)
            out.append(e)
    out.sort(key=lambda e: (e["offset"], -e["length"]))
    return stripped, out


HTML_TAGS = {
    "b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline",
    "ins": "underline", "s": "strikethrough", "strike": "strikethrough", "del": "strikethrough",
    "tg-spoiler": "spoiler", "span": "spoiler", "a": "text_link", "code": "code", "pre": "pre",
    "blockquote": "blockquote", "tg-emoji": "custom_emoji",
}
TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+[A-Za-z_-]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>\"']+))?)*)\s*(/?)>")
ATTR_RE = re.compile(r"([A-Za-z_-]+)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>\"']+))?")
ENTITY_RE = re.compile(r"&(lt|gt|amp|quot|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")


def parse_html(s):
    b = Builder()
    stack = []  # (tag, start, extra)
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == "<":
            m = TAG_RE.match(s, i)
            if not m:
                raise bad(f"can't parse entities: Unclosed start tag at byte offset {byte_offset(s, i)}")
            closing, tag, attrs, selfclose = m.group(1), m.group(2).lower(), m.group(3), m.group(4)
            if tag not in HTML_TAGS:
                kind = "end" if closing else "start"
                raise bad(f"can't parse entities: Unsupported {kind} tag \"{tag}\" at byte offset {byte_offset(s, i)}")
            if closing:
                if not stack:
                    raise bad(f"can't parse entities: Unexpected end tag at byte offset {byte_offset(s, i)}")
                otag, start, extra = stack.pop()
                if otag != tag:
                    raise bad(
                        f"can't parse entities: Unmatched end tag at byte offset {byte_offset(s, i)}, "
                        f"expected \"</{otag}>\", found \"</{tag}>\""
                    )
                etype = HTML_TAGS[tag]
                if etype == "code" and stack and stack[-1][0] == "pre" and extra.get("language"):
                    stack[-1][2]["language"] = extra["language"]
                    etype = None
                if etype == "blockquote" and extra.pop("expandable", False):
                    etype = "expandable_blockquote"
                if etype:
                    b.entity(etype, start, **{k: v for k, v in extra.items() if k != "class"})
            else:
                a = {}
                for am in ATTR_RE.finditer(attrs):
                    v = am.group(2)
                    if v is not None and v[:1] in "\"'":
                        v = v[1:-1]
                    a[am.group(1).lower()] = unescape_html(v) if v is not None else ""
                extra = {}
                if tag == "span" and a.get("class") != "tg-spoiler":
                    raise bad(f"can't parse entities: Tag \"span\" must have class \"tg-spoiler\" at byte offset {byte_offset(s, i)}")
                if tag == "a":
                    href = a.get("href", "")
                    um = re.match(r"tg://user\?id=(\d+)$", href)
                    if um:
                        extra = {"user": {"id": int(um.group(1)), "is_bot": False, "first_name": "User"}}
                    else:
                        extra = {"url": href}
                if tag == "code" and a.get("class", "").startswith("language-"):
                    extra = {"language": a["class"][len("language-"):]}
                if tag == "tg-emoji":
                    extra = {"custom_emoji_id": a.get("emoji-id", "")}
                if tag == "blockquote" and "expandable" in a:
                    extra = {"expandable": True}
                if selfclose:
                    raise bad(f"can't parse entities: Unsupported self-closing tag at byte offset {byte_offset(s, i)}")
                stack.append((tag, b.pos, extra))
            i = m.end()
            continue
        if c == "&":
            m = ENTITY_RE.match(s, i)
            if m:
                b.add(unescape_html(m.group(0)))
                i = m.end()
                continue
        j = i + 1
        while j < n and s[j] not in "<&":
            j += 1
        b.add(s[i:j])
        i = j
    if stack:
        raise bad(f"can't parse entities: Can't find end tag corresponding to start tag \"{stack[-1][0]}\"")
    # a text_link whose user was found becomes text_mention
    for e in b.entities:
        if e["type"] == "text_link" and "user" in e:
            e["type"] = "text_mention"
    return b.done()


def unescape_html(v):
    def rep(m):
        g = m.group(1)
        if g[0] == "#":
            return chr(int(g[2:], 16) if g[1:2] in "xX" else int(g[1:]))
        return {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}[g]

    return ENTITY_RE.sub(rep, v)


MDV2_RESERVED = set("_*[]()~`>#+-=|{}.!")


def parse_markdown_v2(s):
    b = Builder()
    stack = []  # [type, start, byte offset]
    i = 0
    n = len(s)

    def toggle(etype, width):
        nonlocal i
        if stack and stack[-1][0] == etype:
            _, start, _ = stack.pop()
            b.entity(etype, start)
        elif any(e[0] == etype for e in stack):
            raise bad(f"can't parse entities: Can't find end of {etype.capitalize()} entity at byte offset {byte_offset(s, i)}")
        else:
            stack.append([etype, b.pos, byte_offset(s, i)])
        i += width

    line_start = True
    while i < n:
        c = s[i]
        if line_start and c == ">":
            if not (stack and stack[-1][0] == "blockquote"):
                stack.append(["blockquote", b.pos, byte_offset(s, i)])
            i += 1
            line_start = False
            continue
        if c == "\n" and stack and stack[-1][0] == "blockquote" and not s.startswith(">", i + 1):
            _, start, _ = stack.pop()
            b.entity("blockquote", start)
        line_start = c == "\n"
        if c == "\\":
            if i + 1 < n and 1 <= ord(s[i + 1]) <= 126:
                b.add(s[i + 1])
                i += 2
                continue
            raise bad(f"can't parse entities: Character '\\' is reserved and must be escaped with the preceding '\\'")
        if c == "`":
            pre = s.startswith("```", i)
            width = 3 if pre else 1
            j = i + width
            language = None
            if pre:
                nl = s.find("\n", j)
                if nl != -1 and re.fullmatch(r"[A-Za-z0-9_+#-]*", s[j:nl]):
                    language = s[j:nl] or None
                    j = nl + 1
            content = []
            while True:
                if j >= n:
                    raise bad(f"can't parse entities: Can't find end of {'Pre' if pre else 'Code'} entity at byte offset {byte_offset(s, i)}")
                if s[j] == "\\" and j + 1 < n and s[j + 1] in "`\\":
                    content.append(s[j + 1])
                    j += 2
                    continue
                if s.startswith("```" if pre else "`", j):
                    break
                content.append(s[j])
                j += 1
            start = b.pos
            b.add("".join(content))
            b.entity("pre" if pre else "code", start, language=language)
            i = j + width
            continue
        if c == "*":
            toggle("bold", 1)
            continue
        if c == "_":
            if s.startswith("__", i):
                toggle("underline", 2)
            else:
                toggle("italic", 1)
            continue
        if c == "~":
            toggle("strikethrough", 1)
            continue
        if c == "|" and s.startswith("||", i):
            toggle("spoiler", 2)
            continue
        if c == "[" or (c == "!" and s.startswith("![", i)):
            width = 2 if c == "!" else 1
            stack.append(["custom_emoji" if c == "!" else "text_link", b.pos, byte_offset(s, i)])
            i += width
            continue
        if c == "]" and stack and stack[-1][0] in ("text_link", "custom_emoji"):
            etype, start, _ = stack.pop()
            if not s.startswith("(", i + 1):
                raise bad(f"can't parse entities: Character ']' is reserved and must be escaped with the preceding '\\'")
            j = i + 2
            url = []
            while True:
                if j >= n:
                    raise bad(f"can't parse entities: Can't find end of a URL at byte offset {byte_offset(s, i + 1)}")
                if s[j] == "\\" and j + 1 < n and s[j + 1] in ")\\":
                    url.append(s[j + 1])
                    j += 2
                    continue
                if s[j] == ")":
                    break
                url.append(s[j])
                j += 1
            url = "".join(url)
            if etype == "custom_emoji":
                m = re.match(r"tg://emoji\?id=(\d+)$", url)
                b.entity("custom_emoji", start, custom_emoji_id=m.group(1) if m else "")
            else:
                um = re.match(r"tg://user\?id=(\d+)$", url)
                if um:
                    b.entity("text_mention", start, user={"id": int(um.group(1)), "is_bot": False, "first_name": "User"})
                else:
                    b.entity("text_link", start, url=url)
            i = j + 1
            continue
        if c in MDV2_RESERVED:
            raise bad(f"can't parse entities: Character '{c}' is reserved and must be escaped with the preceding '\\'")
        b.add(c)
        i += 1
    if stack and stack[-1][0] == "blockquote":
        _, start, _ = stack.pop()
        b.entity("blockquote", start)
    if stack:
        etype, _, off = stack[-1]
        name = {"text_link": "TextUrl", "custom_emoji": "CustomEmoji"}.get(etype, etype.capitalize())
        raise bad(f"can't parse entities: Can't find end of {name} entity at byte offset {off}")
    return b.done()


def parse_markdown(s):
    """Legacy Markdown: *bold* _italic_ `code` ```pre``` [text](url); no nesting."""
    b = Builder()
    i = 0
    n = len(s)
    ends = {"*": "bold", "_": "italic"}
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n and s[i + 1] in "_*`[":
            b.add(s[i + 1])
            i += 2
            continue
        if c in ends or c == "`" or c == "[":
            if c == "`" and s.startswith("```", i):
                end = s.find("```", i + 3)
                if end == -1:
                    raise bad(f"can't parse entities: Can't find end of the entity starting at byte offset {byte_offset(s, i)}")
                body = s[i + 3:end]
                language = None
                if "\n" in body and re.fullmatch(r"[A-Za-z0-9_+#-]*", body.split("\n", 1)[0]):
                    language, body = body.split("\n", 1)
                    language = language or None
                start = b.pos
                b.add(body)
                b.entity("pre", start, language=language)
                i = end + 3
                continue
            if c == "[":
                m = re.match(r"\[([^\]]*)\]\(([^)]*)\)", s[i:])
                if not m:
                    raise bad(f"can't parse entities: Can't find end of the entity starting at byte offset {byte_offset(s, i)}")
                start = b.pos
                b.add(m.group(1))
                b.entity("text_link", start, url=m.group(2))
                i += m.end()
                continue
            end = s.find(c, i + 1)
            if end == -1:
                raise bad(f"can't parse entities: Can't find end of the entity starting at byte offset {byte_offset(s, i)}")
            start = b.pos
            b.add(s[i + 1:end])
            b.entity(ends.get(c, "code"), start)
            i = end + 1
            continue
        b.add(c)
        i += 1
    return b.done()


def parse_text(text, parse_mode, entities=None):
    """-> (text, entities) as Telegram stores the message."""
    if not isinstance(text, str):
        raise bad("message text is empty")
    mode = (parse_mode or "").lower()
    if mode == "html":
        out, ents = parse_html(text)
    elif mode == "markdownv2":
        out, ents = parse_markdown_v2(text)
    elif mode == "markdown":
        out, ents = parse_markdown(text)
    elif mode:
        raise bad(f"unsupported parse_mode")
    else:
        out, ents = trim(text, list(entities or []))
    if not out:
        raise bad("message text is empty")
    if u16len(out) > 4096:
        raise bad("message is too long")
    return out, ents


# ---------------------------------------------------------------------------------------------
# Parameters

def as_int(v, what):
    if isinstance(v, bool):
        raise bad(f"invalid {what} specified")
    if isinstance(v, int):
        return v
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        raise bad(f"invalid {what} specified") from None


def as_bool(v):
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "1")


def as_json(v):
    if isinstance(v, str):
        return json.loads(v)
    return v


def check_reply_markup(raw, inline_only=False):
    """-> the InlineKeyboardMarkup to echo in the Message, or None."""
    if raw is None or raw == "":
        return None
    try:
        markup = as_json(raw)
    except ValueError:
        raise bad("can't parse reply keyboard markup JSON object") from None
    if not isinstance(markup, dict):
        raise bad("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in markup:
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise bad("can't parse inline keyboard button: Field \"inline_keyboard\" must be of type Array")
        clean = []
        for row in rows:
            out_row = []
            for button in row:
                if not isinstance(button, dict) or not isinstance(button.get("text"), str):
                    raise bad("can't parse inline keyboard button: Field \"text\" must be of type String")
                used = [f for f in INLINE_BUTTON_FIELDS if f in button and button[f] is not None]
                if not used:
                    raise bad("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
                if len(used) > 1:
                    raise bad("can't parse inline keyboard button: exactly one of the optional fields must be used")
                if button.get("style") is not None and button["style"] not in ("primary", "success", "danger"):
                    raise bad("can't parse inline keyboard button: unsupported button style")
                if "callback_data" in used:
                    data = button["callback_data"]
                    if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= 64:
                        raise bad("BUTTON_DATA_INVALID")
                if "url" in used:
                    url = button["url"]
                    if not isinstance(url, str) or not re.match(r"(https?|tg)://\S+$", url):
                        raise bad(f"inline keyboard button URL '{url}' is invalid: Wrong HTTP URL")
                out_row.append({k: v for k, v in button.items() if v is not None})
            if out_row:
                clean.append(out_row)
        return {"inline_keyboard": clean} if clean else None
    if inline_only:
        raise bad("inline keyboard expected")
    if "force_reply" in markup:
        if markup["force_reply"] is not True:
            raise bad("can't parse reply keyboard markup JSON object")
        return None
    if "keyboard" in markup or "remove_keyboard" in markup:
        return None
    raise bad("can't parse reply keyboard markup JSON object")


def read_body_params(handler):
    """Query string and body merged (body wins); values as sent (strings from forms)."""
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(handler.path).query, keep_blank_values=True))
    body = read_body(handler)
    ctype = handler.headers.get("Content-Type", "")
    main = ctype.split(";")[0].strip().lower()
    if body:
        if main == "application/json":
            try:
                obj = json.loads(body.decode("utf-8"))
            except ValueError:
                raise ApiError(400, "Bad Request: can't parse JSON object") from None
            if not isinstance(obj, dict):
                raise ApiError(400, "Bad Request: can't parse JSON object")
            params.update(obj)
        elif main == "multipart/form-data":
            msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + body
            )
            for part in msg.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if name:
                    payload = part.get_payload(decode=True) or b""
                    params[name] = payload.decode("utf-8", "replace")
        else:
            params.update(urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    return params, main, body


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
# The fake

class Telegram:
    def __init__(self, args):
        self.token = args.token
        prefix = args.token.split(":", 1)[0]
        bot_id = args.bot_id or (int(prefix) if prefix.isdigit() else 7000000001)
        username = args.bot_username or "toolgate_test_bot"
        self.bot = {"id": bot_id, "is_bot": True, "first_name": "toolgate", "username": username}
        self.me = dict(
            self.bot, can_join_groups=True, can_read_all_group_messages=False,
            supports_inline_queries=False, can_connect_to_business=False, has_main_web_app=False,
        )
        self.chats = {}
        for cid in args.chat:
            cid = int(cid)
            if cid < 0:
                ctype = "supergroup" if str(cid).startswith("-100") and len(str(cid)) > 10 else "group"
                self.chats[cid] = {"id": cid, "title": f"Approvals {cid}", "type": ctype}
            else:
                self.chats[cid] = {"id": cid, "first_name": f"User{cid}", "type": "private"}
        self.state_file = args.state
        self.cond = threading.Condition()
        self.state = {
            "messages": {},  # "chat:id" -> record
            "next_message_id": {},  # chat -> next id
            "updates": [],  # pending (not confirmed / not delivered)
            "all_updates": [],
            "next_update_id": 718000001,
            "next_query": 1,
            "queries": {},  # id -> {"answered": bool}
            "answers": [],
            "deliveries": [],
            "webhook": None,  # {url, secret_token, allowed_updates, max_connections, last_error_*}
            "allowed_updates": None,
        }
        if self.state_file and os.path.exists(self.state_file):
            with open(self.state_file) as f:
                self.state.update(json.load(f))
        self.calls = {}
        self.requests = []
        self.outage_until = 0.0
        self.rate_limits = {}
        self.poll_gen = 0
        self.webhook_gen = 0
        threading.Thread(target=self.deliverer, daemon=True).start()

    # -- state -----------------------------------------------------------------------------
    def save(self):
        if not self.state_file:
            return
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_file)

    def changed(self):
        self.save()
        self.cond.notify_all()

    def in_outage(self):
        return time.time() < self.outage_until

    def chat(self, chat_id):
        if isinstance(chat_id, str) and chat_id.startswith("@"):
            for c in self.chats.values():
                if c.get("username") == chat_id[1:]:
                    return c
            raise bad("chat not found")
        if chat_id is None or chat_id == "":
            raise bad("chat_id is empty")
        try:
            cid = as_int(chat_id, "chat_id")
        except ApiError:
            raise bad("chat not found") from None
        if cid not in self.chats:
            raise bad("chat not found")
        return self.chats[cid]

    def record(self, chat_id, message_id):
        return self.state["messages"].get(f"{chat_id}:{message_id}")

    def next_message_id(self, chat_id):
        key = str(chat_id)
        mid = self.state["next_message_id"].get(key, 1)
        self.state["next_message_id"][key] = mid + 1
        return mid

    # -- updates ---------------------------------------------------------------------------
    def allowed(self, kind):
        wh = self.state["webhook"]
        allowed = (wh or {}).get("allowed_updates") if wh else self.state["allowed_updates"]
        if allowed:
            return kind in allowed
        return kind not in DEFAULT_ALLOWED

    def enqueue(self, kind, obj):
        uid = self.state["next_update_id"]
        self.state["next_update_id"] = uid + 1
        update = {"update_id": uid, kind: obj}
        self.state["all_updates"].append(update)
        if self.allowed(kind):
            self.state["updates"].append(update)
        self.changed()
        return uid

    def deliverer(self):
        """Posts pending updates to the webhook, one at a time and in order."""
        while True:
            with self.cond:
                while not (self.state["webhook"] and self.state["updates"]):
                    self.cond.wait()
                wh = dict(self.state["webhook"])
                gen = self.webhook_gen
                update = self.state["updates"][0]
            ok = False
            for attempt in range(1, 4):
                status, error = self.post_update(wh, update)
                with self.cond:
                    self.state["deliveries"].append(
                        {"update_id": update["update_id"], "attempt": attempt, "status": status, "error": error}
                    )
                    if status is not None and 200 <= status < 300:
                        ok = True
                    elif self.state["webhook"]:
                        self.state["webhook"]["last_error_date"] = int(time.time())
                        self.state["webhook"]["last_error_message"] = error or f"Wrong response from the webhook: {status}"
                    self.save()
                if ok:
                    break
                time.sleep(0.3)
            with self.cond:
                if ok:
                    if self.state["updates"] and self.state["updates"][0]["update_id"] == update["update_id"]:
                        self.state["updates"].pop(0)
                    self.changed()
                else:
                    # kept pending; tried again later (or taken by getUpdates after deleteWebhook)
                    self.cond.wait_for(lambda: self.webhook_gen != gen, timeout=2.0)

    @staticmethod
    def post_update(wh, update):
        body = json.dumps(update).encode()
        headers = {"Content-Type": "application/json"}
        if wh.get("secret_token"):
            headers["X-Telegram-Bot-Api-Secret-Token"] = wh["secret_token"]
        req = urllib.request.Request(wh["url"], data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                resp.read()
                return resp.status, None
        except urllib.error.HTTPError as e:
            return e.code, f"Wrong response from the webhook: {e.code} {e.reason}"
        except Exception as e:  # connection refused, timeout, ...
            return None, f"Connection failed: {e}"

    # -- messages --------------------------------------------------------------------------
    def message_dict(self, rec):
        chat = self.chats.get(rec["chat_id"]) or {"id": rec["chat_id"], "type": "private", "first_name": "?"}
        m = {
            "message_id": rec["message_id"],
            "from": dict(rec.get("from") or self.bot),
            "chat": dict(chat),
            "date": rec["date"],
        }
        if rec.get("reply_to"):
            parent = self.record(rec["chat_id"], rec["reply_to"])
            if parent:
                pm = self.message_dict(parent)
                pm.pop("reply_to_message", None)
                m["reply_to_message"] = pm
        if rec.get("edit_date"):
            m["edit_date"] = rec["edit_date"]
        m["text"] = rec["text"]
        if rec.get("entities"):
            m["entities"] = rec["entities"]
        if rec.get("reply_markup"):
            m["reply_markup"] = rec["reply_markup"]
        return m

    def find_message(self, params, what):
        if params.get("inline_message_id"):
            raise bad("MESSAGE_ID_INVALID")
        chat = self.chat(params.get("chat_id"))
        if params.get("message_id") in (None, ""):
            raise bad("message identifier is not specified")
        try:
            mid = as_int(params["message_id"], "message_id")
        except ApiError:
            raise bad(f"message to {what} not found") from None
        rec = self.record(chat["id"], mid)
        if rec is None or rec.get("deleted"):
            raise bad(f"message to {what} not found")
        if not rec.get("from_bot", True):
            raise bad("message can't be edited")
        return rec

    # -- methods ---------------------------------------------------------------------------
    def m_getMe(self, p):
        return self.me

    def m_getChat(self, p):
        chat = dict(self.chat(p.get("chat_id")))
        chat.update(
            accent_color_id=0, max_reaction_count=11,
            accepted_gift_types={
                "unlimited_gifts": False, "limited_gifts": False, "unique_gifts": False,
                "premium_subscription": False, "gifts_from_channels": False,
            },
        )
        if chat["type"] != "private":
            chat["permissions"] = {"can_send_messages": True}
        return chat

    def m_sendMessage(self, p):
        chat = self.chat(p.get("chat_id"))
        if p.get("text") is None:
            raise bad("message text is empty")
        entities = as_json(p["entities"]) if p.get("entities") else None
        text, ents = parse_text(p["text"], p.get("parse_mode"), entities)
        markup = check_reply_markup(p.get("reply_markup"))
        reply_to = None
        if p.get("reply_parameters"):
            rp = as_json(p["reply_parameters"])
            reply_to = rp.get("message_id")
            allow = rp.get("allow_sending_without_reply", False)
        elif p.get("reply_to_message_id"):
            reply_to = p["reply_to_message_id"]
            allow = as_bool(p.get("allow_sending_without_reply", False))
        if reply_to is not None:
            reply_to = as_int(reply_to, "reply message identifier")
            parent = self.record(chat["id"], reply_to)
            if parent is None or parent.get("deleted"):
                if not allow:
                    raise bad("message to be replied not found")
                reply_to = None
        rec = {
            "chat_id": chat["id"],
            "message_id": self.next_message_id(chat["id"]),
            "date": int(time.time()),
            "text": text,
            "entities": ents,
            "raw_text": p["text"],
            "parse_mode": p.get("parse_mode"),
            "reply_markup": markup,
            "reply_to": reply_to,
            "edits": [],
            "from_bot": True,
        }
        self.state["messages"][f"{chat['id']}:{rec['message_id']}"] = rec
        self.changed()
        return self.message_dict(rec)

    def apply_edit(self, rec, text, ents, raw, parse_mode, markup):
        if text == rec["text"] and ents == (rec.get("entities") or []) and markup == rec.get("reply_markup"):
            raise bad(NOT_MODIFIED.split("Bad Request: ", 1)[1])
        rec["text"], rec["entities"], rec["raw_text"], rec["parse_mode"] = text, ents, raw, parse_mode
        rec["reply_markup"] = markup
        rec["edit_date"] = int(time.time())
        msg = self.message_dict(rec)
        rec["edits"].append(
            {"text": text, "raw_text": raw, "reply_markup": markup, "date": rec["edit_date"], "message": msg}
        )
        self.changed()
        return msg

    def m_editMessageText(self, p):
        rec = self.find_message(p, "edit")
        if p.get("text") is None:
            raise bad("message text is empty")
        entities = as_json(p["entities"]) if p.get("entities") else None
        text, ents = parse_text(p["text"], p.get("parse_mode"), entities)
        markup = check_reply_markup(p.get("reply_markup"), inline_only=True)
        return self.apply_edit(rec, text, ents, p["text"], p.get("parse_mode"), markup)

    def m_editMessageReplyMarkup(self, p):
        rec = self.find_message(p, "edit")
        markup = check_reply_markup(p.get("reply_markup"), inline_only=True)
        return self.apply_edit(rec, rec["text"], rec.get("entities") or [], rec["raw_text"], rec["parse_mode"], markup)

    def m_deleteMessage(self, p):
        rec = self.find_message(p, "delete")
        rec["deleted"] = True
        self.changed()
        return True

    def m_answerCallbackQuery(self, p):
        qid = str(p.get("callback_query_id") or "")
        q = self.state["queries"].get(qid)
        if q is None or q["answered"]:
            raise bad(QUERY_TOO_OLD.split("Bad Request: ", 1)[1])
        text = p.get("text")
        if text is not None and len(text) > 200:
            raise bad("MESSAGE_TOO_LONG")
        q["answered"] = True
        self.state["answers"].append(
            {
                "callback_query_id": qid,
                "text": text,
                "show_alert": as_bool(p.get("show_alert", False)),
                "url": p.get("url"),
                "cache_time": as_int(p.get("cache_time", 0), "cache_time"),
            }
        )
        self.changed()
        return True

    def m_setWebhook(self, p):
        url = p.get("url") or ""
        if not url:
            return self.m_deleteWebhook(p)
        if not re.match(r"https?://", url):
            raise bad("bad webhook: An HTTPS URL must be provided for webhook")
        secret = p.get("secret_token")
        if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", secret):
            raise bad("secret token contains unallowed characters")
        allowed = as_json(p["allowed_updates"]) if p.get("allowed_updates") else None
        if as_bool(p.get("drop_pending_updates", False)):
            self.state["updates"] = []
        self.state["webhook"] = {
            "url": url,
            "secret_token": secret,
            "allowed_updates": allowed,
            "max_connections": as_int(p.get("max_connections", 40), "max_connections"),
        }
        self.webhook_gen += 1
        self.changed()
        return True

    def m_deleteWebhook(self, p):
        self.state["webhook"] = None
        if as_bool(p.get("drop_pending_updates", False)):
            self.state["updates"] = []
        self.webhook_gen += 1
        self.changed()
        return True

    def m_getWebhookInfo(self, p):
        wh = self.state["webhook"]
        info = {
            "url": wh["url"] if wh else "",
            "has_custom_certificate": False,
            "pending_update_count": len(self.state["updates"]),
        }
        if wh:
            info["max_connections"] = wh["max_connections"]
            info["ip_address"] = "127.0.0.1"
            if wh.get("allowed_updates"):
                info["allowed_updates"] = wh["allowed_updates"]
            if wh.get("last_error_date"):
                info["last_error_date"] = wh["last_error_date"]
                info["last_error_message"] = wh["last_error_message"]
        return info

    def get_updates(self, p):
        """Called with self.cond held; waits on it."""
        if self.state["webhook"]:
            raise ApiError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
        self.poll_gen += 1
        me = self.poll_gen
        self.cond.notify_all()
        offset = as_int(p.get("offset", 0) or 0, "offset")
        limit = as_int(p.get("limit", 100) or 100, "limit")
        limit = min(max(limit, 1), 100)
        try:
            timeout = float(p.get("timeout", 0) or 0)
        except ValueError:
            raise bad("invalid timeout specified") from None
        if p.get("allowed_updates") not in (None, ""):
            allowed = as_json(p["allowed_updates"])
            self.state["allowed_updates"] = allowed or None
        if offset > 0:
            self.state["updates"] = [u for u in self.state["updates"] if u["update_id"] >= offset]
        elif offset < 0:
            self.state["updates"] = self.state["updates"][offset:]
        self.save()
        deadline = time.time() + max(timeout, 0)
        while True:
            if me != self.poll_gen:
                raise ApiError(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
            if self.state["webhook"]:
                raise ApiError(409, "Conflict: terminated by setWebhook request")
            if self.in_outage():
                raise Drop()
            if self.state["updates"]:
                return self.state["updates"][:limit]
            left = deadline - time.time()
            if left <= 0:
                return []
            self.cond.wait(min(left, 0.25))

    # -- test control ----------------------------------------------------------------------
    def t_messages(self):
        out = []
        for rec in self.state["messages"].values():
            if not rec.get("from_bot", True):
                continue
            out.append(
                {
                    "chat_id": rec["chat_id"],
                    "message_id": rec["message_id"],
                    "text": rec["text"],
                    "raw_text": rec["raw_text"],
                    "parse_mode": rec["parse_mode"],
                    "reply_markup": rec["reply_markup"],
                    "date": rec["date"],
                    "edit_date": rec.get("edit_date"),
                    "deleted": bool(rec.get("deleted")),
                    "edits": rec["edits"],
                    "message": self.message_dict(rec),
                }
            )
        return out  # in the order sent

    def user(self, body, prefix="from"):
        uid = body.get(f"{prefix}_id")
        if uid is None:
            raise ValueError(f"{prefix}_id is required")
        u = {"id": int(uid), "is_bot": False, "first_name": body.get(f"{prefix}_first_name") or f"User{uid}"}
        if body.get(f"{prefix}_username"):
            u["username"] = body[f"{prefix}_username"]
        u["language_code"] = "en"
        return u

    def t_tap(self, body):
        rec = self.record(int(body["chat_id"]), int(body["message_id"]))
        if rec is None or rec.get("deleted") or not rec.get("from_bot", True):
            raise ValueError("no such message from the bot")
        data = body.get("data")
        buttons = [b for row in (rec.get("reply_markup") or {}).get("inline_keyboard", []) for b in row]
        if not body.get("force") and not any(b.get("callback_data") == data for b in buttons):
            raise Refused(f"the message shows no button with callback_data {data!r} (force: true to send anyway)")
        qid = str(4310000000000000000 + self.state["next_query"])
        self.state["next_query"] += 1
        self.state["queries"][qid] = {"answered": False}
        query = {
            "id": qid,
            "from": self.user(body),
            "message": self.message_dict(rec),
            "chat_instance": str(-(abs(rec["chat_id"]) * 7919 % 10**18) - 1),
            "data": data,
        }
        uid = self.enqueue("callback_query", query)
        return {"update_id": uid, "callback_query_id": qid}

    def t_reply(self, body):
        chat = self.chats.get(int(body["chat_id"]))
        parent = self.record(int(body["chat_id"]), int(body["reply_to_message_id"]))
        if chat is None or parent is None:
            raise ValueError("no such chat or message")
        text = body.get("text") or ""
        rec = {
            "chat_id": chat["id"],
            "message_id": self.next_message_id(chat["id"]),
            "date": int(time.time()),
            "text": text,
            "entities": [],
            "raw_text": text,
            "parse_mode": None,
            "reply_markup": None,
            "reply_to": parent["message_id"],
            "edits": [],
            "from_bot": False,
            "from": self.user(body),
        }
        self.state["messages"][f"{chat['id']}:{rec['message_id']}"] = rec
        msg = self.message_dict(rec)
        uid = self.enqueue("message", msg)
        return {"update_id": uid, "message_id": rec["message_id"]}


    def t_say(self, body):
        chat = self.chats.get(int(body["chat_id"]))
        if chat is None:
            raise ValueError("no such chat")
        parent = None
        if body.get("reply_to_message_id") is not None:
            parent = self.record(chat["id"], int(body["reply_to_message_id"]))
            if parent is None:
                raise ValueError("no such message to reply to")
        text = body.get("text") or ""
        if not text.strip():
            raise ValueError("text is required")
        entities = []
        m = re.match(r"/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?", text)
        if m:
            entities.append({"type": "bot_command", "offset": 0, "length": u16len(m.group(0))})
        for mm in re.finditer(r"(?<![A-Za-z0-9_/])@[A-Za-z0-9_]{5,32}", text):
            entities.append({
                "type": "mention", "offset": u16len(text[: mm.start()]), "length": u16len(mm.group(0)),
            })
        rec = {
            "chat_id": chat["id"],
            "message_id": self.next_message_id(chat["id"]),
            "date": int(time.time()),
            "text": text,
            "entities": entities,
            "raw_text": text,
            "parse_mode": None,
            "reply_markup": None,
            "reply_to": parent["message_id"] if parent else None,
            "edits": [],
            "from_bot": False,
            "from": self.user(body),
        }
        self.state["messages"][f"{chat['id']}:{rec['message_id']}"] = rec
        uid = self.enqueue("message", self.message_dict(rec))
        return {"update_id": uid, "message_id": rec["message_id"]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: Telegram = None

    def log_message(self, *args):
        pass

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def route(self):
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/_test/"):
            return self.control(path[len("/_test/"):])
        m = re.match(r"/bot([^/]*)/([A-Za-z]+)$", path)
        if not m:
            read_body(self)
            return self.send_json(404, {"ok": False, "error_code": 404, "description": "Not Found"})
        token, method = m.group(1), m.group(2)
        f = self.fake
        name = CANONICAL.get(method.lower(), method)
        record = {"method": name, "http_method": self.command, "content_type": self.headers.get("Content-Type")}
        with f.cond:
            f.calls[name] = f.calls.get(name, 0) + 1
            f.requests.append(record)
            del f.requests[:-500]
        try:
            record["params"] = {}
            params, _, _ = read_body_params(self)
            record["params"] = params
            if f.in_outage():
                raise Drop()
            if token != f.token:
                raise ApiError(401, "Unauthorized")
            if name not in METHODS:
                raise ApiError(404, "Not Found")
            with f.cond:
                limit = f.rate_limits.get(name)
                if limit and limit[0] > 0:
                    limit[0] -= 1
                    raise ApiError(429, f"Too Many Requests: retry after {limit[1]}", {"retry_after": limit[1]})
                if name == "getUpdates":
                    result = f.get_updates(params)
                else:
                    result = getattr(f, "m_" + name)(params)
            record["status"] = 200
            self.send_json(200, {"ok": True, "result": result})
        except Drop:
            record["status"] = None
            self.close_connection = True
        except ApiError as e:
            record["status"] = e.code
            err = {"ok": False, "error_code": e.code, "description": e.description}
            if e.parameters:
                err["parameters"] = e.parameters
            self.send_json(e.code, err)

    def control(self, what):
        f = self.fake
        raw = read_body(self)
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return self.send_json(400, {"error": "body is not JSON"})
        with f.cond:
            try:
                if what == "messages":
                    return self.send_json(200, f.t_messages())
                if what == "answers":
                    return self.send_json(200, f.state["answers"])
                if what == "deliveries":
                    return self.send_json(200, f.state["deliveries"])
                if what == "updates":
                    return self.send_json(200, f.state["all_updates"])
                if what == "calls":
                    return self.send_json(200, f.calls)
                if what == "requests":
                    return self.send_json(200, f.requests)
                if self.command != "POST":
                    return self.send_json(404, {"error": "unknown control endpoint"})
                if what == "tap":
                    return self.send_json(200, f.t_tap(body))
                if what == "reply":
                    return self.send_json(200, f.t_reply(body))
                if what == "say":
                    return self.send_json(200, f.t_say(body))
                if what == "outage":
                    f.outage_until = time.time() + float(body.get("ms", 0)) / 1000.0
                    f.cond.notify_all()
                    return self.send_json(200, {})
                if what == "ratelimit":
                    f.rate_limits[body["method"]] = [int(body.get("count", 1)), int(body.get("retry_after", 1))]
                    return self.send_json(200, {})
            except Refused as e:
                return self.send_json(409, {"error": str(e)})
            except (KeyError, ValueError, TypeError) as e:
                return self.send_json(400, {"error": f"{type(e).__name__}: {e}"})
        return self.send_json(404, {"error": "unknown control endpoint"})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--token", required=True)
    ap.add_argument("--chat", action="append", default=[], required=True)
    ap.add_argument("--bot-id", type=int)
    ap.add_argument("--bot-username")
    ap.add_argument("--state")
    args = ap.parse_args()
    Handler.fake = Telegram(args)
    server = Server(("127.0.0.1", 0), Handler)
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
