"""The official SDKs check the chat fakes (fake_telegram.py, fake_slack.py): python-telegram-bot
and slack_sdk, pinned in scripts/test.sh, pointed at the fakes must accept what they answer.

Usage:
  chat_sdk_check.py
      Starts both fakes, drives them with the SDKs (and the fakes' control endpoints), prints one
      JSON line {"ok": bool, "passed": N, "failed": [...], "checks": [...]} and exits 1 on any
      failure.
  chat_sdk_check.py --validate URL_TELEGRAM URL_SLACK
      URL_*: the base URL of an already running fake (http://127.0.0.1:PORT), or - to skip it.
      Every message the bot posted, and every edit of it, is parsed with the SDKs' models:
      telegram.Message / telegram.InlineKeyboardMarkup (no field unknown to the SDK, the keyboard
      round-trips through to_dict), slack_sdk Block.parse_all (each block a known type, its
      validate_json() passes, and it round-trips through to_dict). Prints
      {"telegram_messages": n, "slack_messages": m, ...} and exits 0, or prints the reasons and
      exits 1.
"""

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
TG_TOKEN = "5550001234:AAH-fake-telegram-token_for_tests"
TG_GROUP = -1001234567890
TG_USER_CHAT = 424242
SLACK_TOKEN = "xoxb-1-toolgate-fake-token"
SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
SLACK_CHANNEL = "C0APPROVALS"

CHECKS = []


def check(name, ok, detail=""):
    CHECKS.append({"name": name, "ok": bool(ok), **({"detail": str(detail)[:500]} if not ok else {})})
    return bool(ok)


def expect_raises(name, exc_types, fn, match=None):
    try:
        fn()
    except exc_types as e:
        text = str(e)
        return check(name, match is None or match.lower() in text.lower(), f"raised {type(e).__name__}: {text}")
    except Exception as e:  # noqa: BLE001 - reported as a failure
        return check(name, False, f"raised {type(e).__name__}: {e}")
    return check(name, False, "did not raise")


async def expect_raises_async(name, exc_types, coro, match=None):
    try:
        await coro
    except exc_types as e:
        text = str(e)
        return check(name, match is None or match.lower() in text.lower(), f"raised {type(e).__name__}: {text}")
    except Exception as e:  # noqa: BLE001
        return check(name, False, f"raised {type(e).__name__}: {e}")
    return check(name, False, "did not raise")


def http(method, url, body=None, timeout=15):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def start(script, *args):
    proc = subprocess.Popen(
        [sys.executable, os.path.join(HERE, script), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"{script} did not start: {proc.stderr.read()}")
    return proc, json.loads(line)["port"]


class Receiver:
    """Captures raw requests (for webhooks and interactivity posts); answers 200 and an empty body."""

    def __init__(self):
        self.requests = []
        self.cond = threading.Condition()
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.cond:
                    outer.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    outer.cond.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def wait(self, n, timeout=10):
        with self.cond:
            self.cond.wait_for(lambda: len(self.requests) >= n, timeout)
            return self.requests[n - 1] if len(self.requests) >= n else None

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------------------------------
# python-telegram-bot

async def telegram_checks(port):
    import telegram
    from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Update
    from telegram.error import BadRequest, Conflict, InvalidToken, NetworkError, TimedOut

    base = f"http://127.0.0.1:{port}"
    bot = Bot(TG_TOKEN, base_url=f"{base}/bot")
    async with bot:
        me = await bot.get_me()
        check("tg get_me", me.is_bot and me.id == 5550001234 and me.username, me)

        kb = InlineKeyboardMarkup(
            [
                [InlineKeyboardButton("Approve", callback_data="tg1:a:r-0001"),
                 InlineKeyboardButton("Deny", callback_data="tg1:d:r-0001")],
                [InlineKeyboardButton("Approve always", callback_data="tg1:A:r-0001"),
                 InlineKeyboardButton("Details", url="https://example.com/requests/r-0001")],
            ]
        )
        text = "<b>Approval needed</b>\nTool <code>shell.exec</code> wants to run <i>rm -rf /tmp/x &amp; more</i>"
        msg = await bot.send_message(TG_GROUP, text, parse_mode="HTML", reply_markup=kb)
        check("tg send_message returns a Message", isinstance(msg, telegram.Message) and msg.message_id >= 1, msg)
        check("tg message text is the parsed text",
              msg.text == "Approval needed\nTool shell.exec wants to run rm -rf /tmp/x & more", repr(msg.text))
        kinds = [e.type for e in msg.entities]
        check("tg HTML entities", kinds == ["bold", "code", "italic"], kinds)
        check("tg entity text via parse_entities",
              sorted(msg.parse_entities().values()) == sorted(["Approval needed", "shell.exec", "rm -rf /tmp/x & more"]),
              msg.parse_entities())
        check("tg reply_markup echoed", msg.reply_markup == kb and len([b for r in msg.reply_markup.inline_keyboard for b in r]) == 4,
              msg.reply_markup)
        check("tg chat and sender", msg.chat.type == "supergroup" and msg.from_user.id == me.id and msg.date is not None, msg)

        edited = await bot.edit_message_text("✅ Approved by @alice", chat_id=TG_GROUP, message_id=msg.message_id)
        check("tg edit_message_text", isinstance(edited, telegram.Message) and edited.text == "✅ Approved by @alice"
              and edited.edit_date is not None and edited.reply_markup is None, edited)
        await expect_raises_async(
            "tg edit with the same content is BadRequest 'not modified'", BadRequest,
            bot.edit_message_text("✅ Approved by @alice", chat_id=TG_GROUP, message_id=msg.message_id), "not modified")
        await expect_raises_async(
            "tg edit of an unknown message is BadRequest", BadRequest,
            bot.edit_message_text("x", chat_id=TG_GROUP, message_id=999999), "message to edit not found")
        kb2 = InlineKeyboardMarkup([[InlineKeyboardButton("Undo", callback_data="tg1:u:r-0001")]])
        em = await bot.edit_message_reply_markup(chat_id=TG_GROUP, message_id=msg.message_id, reply_markup=kb2)
        check("tg edit_message_reply_markup", em.reply_markup == kb2, em)

        # a tap on a fresh message, read by long polling
        msg2 = await bot.send_message(TG_GROUP, "Approve <b>fs.write</b>?", parse_mode="HTML", reply_markup=kb)
        st, tap = http("POST", f"{base}/_test/tap", {"chat_id": TG_GROUP, "message_id": msg2.message_id,
                                                      "from_id": 1001, "from_username": "alice", "data": "tg1:a:r-0001"})
        check("tg /_test/tap", st == 200 and "callback_query_id" in tap, tap)
        st, bad_tap = http("POST", f"{base}/_test/tap", {"chat_id": TG_GROUP, "message_id": msg2.message_id,
                                                          "from_id": 1001, "data": "not-a-button"})
        check("tg /_test/tap refuses data that no button has", st == 409, bad_tap)
        updates = await bot.get_updates(timeout=2)
        cq = updates[0].callback_query if updates else None
        check("tg get_updates returns the CallbackQuery", len(updates) == 1 and cq is not None
              and updates[0].update_id == tap["update_id"], updates)
        if cq:
            check("tg callback data and user", cq.data == "tg1:a:r-0001" and cq.from_user.id == 1001
                  and cq.from_user.username == "alice" and cq.chat_instance, cq)
            check("tg callback message parses", isinstance(cq.message, telegram.Message)
                  and cq.message.message_id == msg2.message_id and cq.message.reply_markup == kb
                  and cq.message.chat.id == TG_GROUP, cq.message)
            ok = await bot.answer_callback_query(cq.id, text="Approved", show_alert=False)
            check("tg answer_callback_query", ok is True)
            await expect_raises_async("tg a second answer is BadRequest", BadRequest,
                                      bot.answer_callback_query(cq.id, text="again"), "query is too old")
            st, answers = http("GET", f"{base}/_test/answers")
            check("tg /_test/answers", answers and answers[-1]["callback_query_id"] == cq.id and answers[-1]["text"] == "Approved", answers)
        await expect_raises_async("tg unknown callback query id is BadRequest", BadRequest,
                                  bot.answer_callback_query("123", text="x"), "query is too old")

        # a reply to the bot's message
        st, rep = http("POST", f"{base}/_test/reply", {"chat_id": TG_GROUP, "reply_to_message_id": msg2.message_id,
                                                        "from_id": 1002, "from_username": "bob", "text": "deny: not today"})
        updates = await bot.get_updates(offset=tap["update_id"] + 1, timeout=2)
        m = updates[0].message if updates else None
        check("tg reply parses with reply_to_message", m is not None and m.text == "deny: not today"
              and m.reply_to_message is not None and m.reply_to_message.message_id == msg2.message_id
              and m.from_user.id == 1002 and m.message_id == rep.get("message_id"), updates)
        updates = await bot.get_updates(offset=rep["update_id"] + 1, timeout=0)
        check("tg offset confirms earlier updates", updates == (), updates)

        # a user's own message (the conversations' bots): a mention and a command
        st, say = http("POST", f"{base}/_test/say", {"chat_id": TG_GROUP, "from_id": 1002, "from_username": "bob",
                                                      "text": "/help@toolgate_test_bot and @toolgate_test_bot hi"})
        updates = await bot.get_updates(offset=rep["update_id"] + 1, timeout=2)
        m = updates[0].message if updates else None
        kinds = [e.type for e in m.entities] if m else []
        check("tg a said message parses with its entities", m is not None and m.reply_to_message is None
              and m.from_user.id == 1002 and m.message_id == say.get("message_id")
              and kinds == ["bot_command", "mention"]
              and m.parse_entity(m.entities[1]) == "@toolgate_test_bot", updates)
        st, say2 = http("POST", f"{base}/_test/say", {"chat_id": TG_GROUP, "from_id": 1002, "text": "more",
                                                       "reply_to_message_id": msg2.message_id})
        updates = await bot.get_updates(offset=say["update_id"] + 1, timeout=2)
        m = updates[0].message if updates else None
        check("tg a said reply names the bot's message", m is not None and m.reply_to_message is not None
              and m.reply_to_message.from_user.is_bot, updates)
        await bot.get_updates(offset=say2["update_id"] + 1, timeout=0)

        # long polling: waits for the timeout, and a second poll ends the first with 409
        t0 = time.time()
        updates = await bot.get_updates(timeout=1)
        check("tg long poll waits for timeout", updates == () and 0.8 <= time.time() - t0 < 3, time.time() - t0)
        # (another Bot: one Bot's polls share a single connection and queue behind each other)
        async with Bot(TG_TOKEN, base_url=f"{base}/bot") as other:
            first = asyncio.create_task(bot.get_updates(timeout=5))
            await asyncio.sleep(0.4)
            second = asyncio.create_task(other.get_updates(timeout=1))
            await expect_raises_async("tg a second getUpdates ends the first with Conflict", Conflict, first, "terminated by other getUpdates")
            check("tg the second poll answers normally", await second == ())
        # a tap during a long poll wakes it
        poll = asyncio.create_task(bot.get_updates(timeout=5))
        await asyncio.sleep(0.3)
        t0 = time.time()
        http("POST", f"{base}/_test/tap", {"chat_id": TG_GROUP, "message_id": msg2.message_id, "from_id": 1003, "data": "tg1:d:r-0001"})
        updates = await poll
        check("tg a waiting poll returns the new update at once", len(updates) == 1 and time.time() - t0 < 1.5, updates)
        if updates:
            await bot.get_updates(offset=updates[-1].update_id + 1, timeout=0)

        # webhook
        recv = Receiver()
        ok = await bot.set_webhook(f"{recv.url}/tg-hook", secret_token="hook_secret-1")
        check("tg set_webhook", ok is True)
        info = await bot.get_webhook_info()
        check("tg get_webhook_info", info.url == f"{recv.url}/tg-hook" and info.pending_update_count == 0
              and info.has_custom_certificate is False, info)
        await expect_raises_async("tg getUpdates with a webhook is Conflict", Conflict, bot.get_updates(timeout=0), "webhook is active")
        st, tap3 = http("POST", f"{base}/_test/tap", {"chat_id": TG_GROUP, "message_id": msg2.message_id, "from_id": 1004, "data": "tg1:A:r-0001"})
        req = recv.wait(1)
        if check("tg webhook delivery arrives", req is not None):
            upd = Update.de_json(json.loads(req["body"]), bot)
            check("tg webhook body parses as Update", upd.update_id == tap3["update_id"] and upd.callback_query.data == "tg1:A:r-0001", upd)
            check("tg webhook secret header", req["headers"].get("X-Telegram-Bot-Api-Secret-Token") == "hook_secret-1", req["headers"])
        time.sleep(0.2)
        st, deliveries = http("GET", f"{base}/_test/deliveries")
        check("tg /_test/deliveries", deliveries and deliveries[-1]["update_id"] == tap3["update_id"] and deliveries[-1]["status"] == 200, deliveries)
        check("tg delete_webhook", await bot.delete_webhook() is True)
        info = await bot.get_webhook_info()
        check("tg webhook gone", info.url == "", info)
        recv.close()

        # limits and errors as Telegram answers them
        await expect_raises_async("tg 4097 characters is BadRequest", BadRequest, bot.send_message(TG_GROUP, "x" * 4097), "too long")
        m4096 = await bot.send_message(TG_GROUP, "y" * 4096)
        check("tg 4096 characters is accepted", len(m4096.text) == 4096)
        await expect_raises_async("tg empty text is BadRequest", BadRequest, bot.send_message(TG_GROUP, "  "), "empty")
        long_kb = InlineKeyboardMarkup([[InlineKeyboardButton("X", callback_data="z" * 65)]])
        await expect_raises_async("tg 65-byte callback_data is BadRequest", BadRequest,
                                  bot.send_message(TG_GROUP, "x", reply_markup=long_kb), "button_data_invalid")
        ok64 = await bot.send_message(TG_GROUP, "x", reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("X", callback_data="é" * 32)]]))
        check("tg 64-byte callback_data is accepted", ok64.reply_markup is not None)
        await expect_raises_async("tg MarkdownV2 needs '.' escaped", BadRequest,
                                  bot.send_message(TG_GROUP, "Run fs.write?", parse_mode="MarkdownV2"), "reserved")
        md = await bot.send_message(TG_GROUP, "Run *fs\\.write*?".replace("?", "\\?"), parse_mode="MarkdownV2")
        check("tg MarkdownV2 escaped text", md.text == "Run fs.write?" and md.entities[0].type == "bold", md)
        await expect_raises_async("tg unknown chat is BadRequest", BadRequest, bot.send_message(-100999, "x"), "chat not found")
        chat = await bot.get_chat(TG_GROUP)
        check("tg get_chat", chat.id == TG_GROUP and chat.type == "supergroup", chat)
        priv = await bot.send_message(TG_USER_CHAT, "hi")
        check("tg private chat", priv.chat.type == "private" and priv.chat.first_name, priv.chat)

        # an outage: the connection closes without an answer
        http("POST", f"{base}/_test/outage", {"ms": 600})
        await expect_raises_async("tg outage is a NetworkError", (NetworkError, TimedOut), bot.get_me())
        await asyncio.sleep(0.7)
        check("tg after the outage", (await bot.get_me()).id == me.id)
        st, calls = http("GET", f"{base}/_test/calls")
        check("tg /_test/calls", calls.get("sendMessage", 0) >= 8 and calls.get("getMe", 0) >= 3, calls)

    wrong = Bot("5550001234:wrong-token", base_url=f"{base}/bot")
    await expect_raises_async("tg wrong token is InvalidToken", InvalidToken, wrong.get_me())


# ---------------------------------------------------------------------------------------------
# slack_sdk

def slack_checks(port):
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError
    from slack_sdk.models.blocks import (ActionsBlock, Block, ButtonElement, ContextBlock, HeaderBlock,
                                         InputBlock, MarkdownTextObject, PlainTextInputElement, SectionBlock)
    from slack_sdk.signature import SignatureVerifier

    base = f"http://127.0.0.1:{port}"
    client = WebClient(token=SLACK_TOKEN, base_url=f"{base}/api/")
    auth = client.auth_test()
    check("slack auth_test", auth["ok"] and auth["user_id"] and auth["bot_id"] and auth["team_id"], auth.data)

    blocks = [
        HeaderBlock(text="Approval needed"),
        SectionBlock(block_id="req", text=MarkdownTextObject(text="*shell.exec* wants to run `ls -la`")),
        InputBlock(block_id="reason", label="Reason (optional)", optional=True,
                   element=PlainTextInputElement(action_id="reason_input", placeholder="why?")),
        ActionsBlock(block_id="decide", elements=[
            ButtonElement(text="Approve", action_id="approve", value="r-0001", style="primary"),
            ButtonElement(text="Deny", action_id="deny", value="r-0001", style="danger"),
        ]),
        ContextBlock(elements=[MarkdownTextObject(text="toolgate · request r-0001")]),
    ]
    posted = client.chat_postMessage(channel=SLACK_CHANNEL, text="Approval needed: shell.exec", blocks=blocks)
    ts = posted["ts"]
    check("slack chat_postMessage", posted["ok"] and posted["channel"] == SLACK_CHANNEL and ts
          and posted["message"]["text"] == "Approval needed: shell.exec", posted.data)
    parsed = Block.parse_all(posted["message"]["blocks"])
    check("slack posted blocks parse", [type(b).__name__ for b in parsed]
          == ["HeaderBlock", "SectionBlock", "InputBlock", "ActionsBlock", "ContextBlock"], parsed)
    for b in parsed:
        b.validate_json()
    posted2 = client.chat_postMessage(channel=SLACK_CHANNEL, text="second", blocks=blocks)
    check("slack ts are unique", posted2["ts"] != ts, (ts, posted2["ts"]))

    # interactivity: a signed block_actions payload, checked by slack_sdk's SignatureVerifier
    verifier = SignatureVerifier(SLACK_SECRET)
    recv = Receiver()
    st, click = http("POST", f"{base}/_test/click", {
        "url": f"{recv.url}/slack/interactivity", "channel": SLACK_CHANNEL, "ts": ts, "user_id": "U0ALICE",
        "user_name": "alice", "action_id": "approve", "value": "r-0001",
        "state": {"reason": {"reason_input": {"type": "plain_text_input", "value": "looks fine"}}},
    })
    req = recv.wait(1)
    check("slack /_test/click reports the receiver's answer", st == 200 and click.get("status") == 200, click)
    if check("slack click arrives", req is not None):
        raw, headers = req["body"], req["headers"]
        check("slack click is form-encoded", headers.get("Content-Type") == "application/x-www-form-urlencoded", headers)
        check("slack SignatureVerifier.is_valid_request", verifier.is_valid_request(raw, headers), headers)
        check("slack SignatureVerifier.is_valid",
              verifier.is_valid(raw, headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"]))
        payload = json.loads(urllib.parse.parse_qs(raw.decode())["payload"][0])
        act = payload["actions"][0]
        check("slack payload is block_actions", payload["type"] == "block_actions" and payload["user"]["id"] == "U0ALICE"
              and payload["container"] == {"type": "message", "message_ts": ts, "channel_id": SLACK_CHANNEL, "is_ephemeral": False}
              and payload["channel"]["id"] == SLACK_CHANNEL and payload["team"]["id"] and payload["trigger_id"]
              and payload["enterprise"] is None and payload["is_enterprise_install"] is False, payload)
        check("slack payload action", act["action_id"] == "approve" and act["block_id"] == "decide" and act["value"] == "r-0001"
              and act["type"] == "button" and act["text"]["text"] == "Approve" and act["action_ts"], act)
        check("slack payload state", payload["state"]["values"]["reason"]["reason_input"]["value"] == "looks fine", payload["state"])
        mblocks = Block.parse_all(payload["message"]["blocks"])
        check("slack payload message blocks parse", len(mblocks) == 5 and all(b is not None for b in mblocks), mblocks)
        for b in mblocks:
            b.validate_json()
        # replay: the same bytes and headers again
        http("POST", f"{base}/_test/click", {"replay": True})
        again = recv.wait(2)
        check("slack replay is byte-for-byte", again is not None and again["body"] == raw
              and again["headers"]["X-Slack-Signature"] == headers["X-Slack-Signature"]
              and again["headers"]["X-Slack-Request-Timestamp"] == headers["X-Slack-Request-Timestamp"])
        # response_url
        rs, rbody = http("POST", payload["response_url"], {"replace_original": True, "text": "Approved by alice"})
        st, msgs = http("GET", f"{base}/_test/messages")
        mine = [m for m in msgs if m["ts"] == ts]
        check("slack response_url replace_original", rs == 200 and mine and mine[0]["text"] == "Approved by alice"
              and mine[0]["updates"][-1]["via"] == "response_url", mine)
        st, resps = http("GET", f"{base}/_test/responses")
        check("slack /_test/responses", resps and resps[-1]["body"]["text"] == "Approved by alice", resps)

    ts2 = posted2["ts"]
    http("POST", f"{base}/_test/click", {"url": f"{recv.url}/i", "channel": SLACK_CHANNEL, "ts": ts2,
                                         "user_id": "U0MALLORY", "action_id": "deny", "bad_signature": True})
    req = recv.wait(3)
    check("slack bad_signature is refused by SignatureVerifier", req is not None and not verifier.is_valid_request(req["body"], req["headers"]))
    http("POST", f"{base}/_test/click", {"url": f"{recv.url}/i", "channel": SLACK_CHANNEL, "ts": ts2,
                                         "user_id": "U0ALICE", "action_id": "deny", "timestamp_offset": -600})
    req = recv.wait(4)
    if check("slack stale click arrives", req is not None):
        stale_ts = req["headers"]["X-Slack-Request-Timestamp"]
        check("slack stale timestamp is refused by SignatureVerifier", not verifier.is_valid_request(req["body"], req["headers"])
              and verifier.generate_signature(timestamp=stale_ts, body=req["body"]) == req["headers"]["X-Slack-Signature"])
    st, nope = http("POST", f"{base}/_test/click", {"url": f"{recv.url}/i", "channel": SLACK_CHANNEL, "ts": ts2,
                                                    "user_id": "U0ALICE", "action_id": "no_such_button"})
    check("slack click on a button the message lacks is refused", st == 409, nope)

    # Events API: a signed event_callback and the url_verification handshake, checked by
    # slack_sdk's SignatureVerifier; the message the event carries is in the channel.
    st, ev = http("POST", f"{base}/_test/event", {"url": f"{recv.url}/events", "type": "app_mention",
                                                  "channel": SLACK_CHANNEL, "user": "U0ALICE",
                                                  "text": "<@U0TGBOT01> weather?", "retry": 1})
    req = recv.wait(5)
    if check("slack event arrives", st == 200 and ev.get("status") == 200 and req is not None, ev):
        check("slack event signature passes SignatureVerifier", verifier.is_valid_request(req["body"], req["headers"])
              and req["headers"].get("X-Slack-Retry-Num") == "1", req["headers"])
        env = json.loads(req["body"])
        e = env["event"]
        check("slack event_callback envelope", env["type"] == "event_callback" and env["event_id"] == ev["event_id"]
              and env["authorizations"][0]["is_bot"] and e["type"] == "app_mention" and e["user"] == "U0ALICE"
              and e["ts"] == ev["ts"] and e["channel"] == SLACK_CHANNEL and e["text"] == "<@U0TGBOT01> weather?", env)
    st, uv = http("POST", f"{base}/_test/url_verification", {"url": f"{recv.url}/events"})
    req = recv.wait(6)
    check("slack url_verification is signed with its challenge", req is not None and uv.get("challenge")
          and verifier.is_valid_request(req["body"], req["headers"])
          and json.loads(req["body"]) == {"token": "Shh_legacy_verification_token", "challenge": uv["challenge"],
                                         "type": "url_verification"}, uv)
    recv.close()

    def err_of_early(fn):
        try:
            fn()
        except SlackApiError as e:
            return e.response["error"]
        return None

    updated = client.chat_update(channel=SLACK_CHANNEL, ts=ts2, text="Denied by alice",
                                 blocks=[SectionBlock(text=MarkdownTextObject(text=":x: *Denied* by <@U0ALICE>"))])
    check("slack chat_update", updated["ok"] and updated["ts"] == ts2 and updated["text"] == "Denied by alice"
          and len(updated["message"]["blocks"]) == 1, updated.data)
    text_only = client.chat_update(channel=SLACK_CHANNEL, ts=ts2, text="Denied (text only)")
    check("slack chat_update without blocks keeps the blocks", len(text_only["message"].get("blocks", [])) == 1, text_only.data)
    eph = client.chat_postEphemeral(channel=SLACK_CHANNEL, user="U0BOB", text="You are not an approver for this request")
    check("slack chat_postEphemeral", eph["ok"] and eph["message_ts"], eph.data)
    st, ephs = http("GET", f"{base}/_test/ephemeral")
    check("slack /_test/ephemeral", ephs and ephs[-1]["user"] == "U0BOB", ephs)
    gone = client.chat_postMessage(channel=SLACK_CHANNEL, text="a draft")
    deleted = client.chat_delete(channel=SLACK_CHANNEL, ts=gone["ts"])
    check("slack chat_delete", deleted["ok"] and deleted["ts"] == gone["ts"], deleted.data)
    check("slack chat_update of a deleted message is message_not_found",
          err_of_early(lambda: client.chat_update(channel=SLACK_CHANNEL, ts=gone["ts"], text="x")) == "message_not_found")
    info = client.conversations_info(channel=SLACK_CHANNEL)
    check("slack conversations_info", info["channel"]["id"] == SLACK_CHANNEL and info["channel"]["is_member"], info.data)

    def err_of(fn):
        try:
            fn()
        except SlackApiError as e:
            return e.response["error"]
        return None

    check("slack wrong channel is channel_not_found",
          err_of(lambda: client.chat_postMessage(channel="C0NOPE", text="x")) == "channel_not_found")
    check("slack chat_update of an unknown ts is message_not_found",
          err_of(lambda: client.chat_update(channel=SLACK_CHANNEL, ts="1.000001", text="x")) == "message_not_found")
    long_button = [{"type": "actions", "elements": [{"type": "button", "text": {"type": "plain_text", "text": "b" * 76}, "action_id": "x"}]}]
    check("slack a 76-character button text is invalid_blocks",
          err_of(lambda: client.chat_postMessage(channel=SLACK_CHANNEL, text="x", blocks=long_button)) == "invalid_blocks")
    big_section = [{"type": "section", "text": {"type": "mrkdwn", "text": "s" * 3001}}]
    check("slack a 3001-character section is invalid_blocks",
          err_of(lambda: client.chat_postMessage(channel=SLACK_CHANNEL, text="x", blocks=big_section)) == "invalid_blocks")
    check("slack 51 blocks is invalid_blocks",
          err_of(lambda: client.chat_postMessage(channel=SLACK_CHANNEL, text="x", blocks=[{"type": "divider"}] * 51)) == "invalid_blocks")
    check("slack 40001 characters is msg_too_long",
          err_of(lambda: client.chat_postMessage(channel=SLACK_CHANNEL, text="t" * 40001)) == "msg_too_long")
    check("slack no text is no_text", err_of(lambda: client.chat_postMessage(channel=SLACK_CHANNEL, text="")) == "no_text")
    check("slack unknown method", err_of(lambda: client.api_call("chat.nope")) == "unknown_method")
    bad = WebClient(token="xoxb-wrong", base_url=f"{base}/api/")
    check("slack wrong token is invalid_auth", err_of(bad.auth_test) == "invalid_auth")
    anon = WebClient(base_url=f"{base}/api/")
    check("slack no token is not_authed", err_of(anon.auth_test) == "not_authed")
    # form-encoded with the token as a field, as older clients send
    body = urllib.parse.urlencode({"token": SLACK_TOKEN, "channel": SLACK_CHANNEL, "text": "form post",
                                   "blocks": json.dumps([{"type": "section", "text": {"type": "plain_text", "text": "hi"}}])}).encode()
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/chat.postMessage", data=body)) as r:
        form = json.loads(r.read())
    check("slack form-encoded post with token field", form.get("ok") and form["message"]["blocks"][0]["text"]["emoji"] is True, form)

    # (slack_sdk retries a failed connection once by default; this client does not)
    no_retry = WebClient(token=SLACK_TOKEN, base_url=f"{base}/api/", retry_handlers=[])
    http("POST", f"{base}/_test/outage", {"ms": 500})
    check("slack outage drops the connection", err_of_any(no_retry.auth_test) is not None)
    time.sleep(0.6)
    check("slack after the outage", client.auth_test()["ok"])
    st, calls = http("GET", f"{base}/_test/calls")
    check("slack /_test/calls", calls.get("chat.postMessage", 0) >= 3, calls)


def err_of_any(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return e
    return None


# ---------------------------------------------------------------------------------------------
# --validate

def validate_telegram(url, problems):
    import telegram
    from telegram import InlineKeyboardMarkup, Message

    with urllib.request.urlopen(f"{url.rstrip('/')}/_test/messages", timeout=15) as r:
        records = json.loads(r.read())
    bot = telegram.Bot(TG_TOKEN)

    def unknown_fields(obj, where):
        if obj.api_kwargs:
            problems.append(f"telegram {where}: fields unknown to python-telegram-bot: {sorted(obj.api_kwargs)}")

    def one(msg_dict, markup, where):
        try:
            m = Message.de_json(msg_dict, bot)
        except Exception as e:  # noqa: BLE001
            problems.append(f"telegram {where}: Message.de_json failed: {type(e).__name__}: {e}")
            return
        unknown_fields(m, where)
        if not m.text:
            problems.append(f"telegram {where}: no text")
        for e in m.entities:
            unknown_fields(e, where + " entity")
        if markup is not None:
            try:
                kb = InlineKeyboardMarkup.de_json(markup, bot)
            except Exception as e:  # noqa: BLE001
                problems.append(f"telegram {where}: InlineKeyboardMarkup.de_json failed: {type(e).__name__}: {e}")
                return
            unknown_fields(kb, where + " reply_markup")
            for row in kb.inline_keyboard:
                for b in row:
                    unknown_fields(b, where + f" button {b.text!r}")
            if kb.to_dict() != markup:
                problems.append(f"telegram {where}: reply_markup does not round-trip: {markup} -> {kb.to_dict()}")
            if m.reply_markup != kb:
                problems.append(f"telegram {where}: the message's reply_markup differs")

    edits = 0
    for rec in records:
        where = f"message {rec['chat_id']}/{rec['message_id']}"
        one(rec["message"], rec["reply_markup"], where)
        for i, e in enumerate(rec["edits"]):
            edits += 1
            one(e["message"], e["reply_markup"], f"{where} edit {i + 1}")
    return len(records), edits


def validate_slack(url, problems):
    from slack_sdk.models.blocks import Block

    with urllib.request.urlopen(f"{url.rstrip('/')}/_test/messages", timeout=15) as r:
        records = json.loads(r.read())
    with urllib.request.urlopen(f"{url.rstrip('/')}/_test/ephemeral", timeout=15) as r:
        ephemeral = json.loads(r.read())

    def blocks_ok(blocks, where):
        if blocks is None:
            return
        try:
            parsed = Block.parse_all(blocks)
        except Exception as e:  # noqa: BLE001
            problems.append(f"slack {where}: Block.parse_all failed: {type(e).__name__}: {e}")
            return
        for i, (raw, b) in enumerate(zip(blocks, parsed)):
            if b is None or type(b) is Block:
                problems.append(f"slack {where} block {i}: type {raw.get('type')!r} unknown to slack_sdk")
                continue
            try:
                b.validate_json()
            except Exception as e:  # noqa: BLE001
                problems.append(f"slack {where} block {i}: validate_json: {type(e).__name__}: {e}")
                continue
            if b.to_dict() != raw:
                problems.append(f"slack {where} block {i}: does not round-trip through slack_sdk: {raw} -> {b.to_dict()}")

    updates = 0
    for rec in records:
        where = f"message {rec['channel']}/{rec['ts']}"
        if not rec["text"] and not rec["blocks"]:
            problems.append(f"slack {where}: neither text nor blocks")
        blocks_ok(rec["blocks"], where)
        blocks_ok(rec["message"].get("blocks"), where + " (as stored)")
        for i, u in enumerate(rec["updates"]):
            updates += 1
            blocks_ok(u["blocks"], f"{where} update {i + 1}")
    for i, e in enumerate(ephemeral):
        blocks_ok(e["blocks"], f"ephemeral {i + 1} to {e['user']}")
    return len(records), updates, len(ephemeral)


def validate(tg_url, slack_url):
    problems = []
    out = {}
    if tg_url != "-":
        out["telegram_messages"], out["telegram_edits"] = validate_telegram(tg_url, problems)
    if slack_url != "-":
        out["slack_messages"], out["slack_updates"], out["slack_ephemeral"] = validate_slack(slack_url, problems)
    if problems:
        out["problems"] = problems
    print(json.dumps(out), flush=True)
    return 1 if problems else 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--validate":
        if len(sys.argv) != 4:
            print("usage: chat_sdk_check.py --validate URL_TELEGRAM|- URL_SLACK|-", file=sys.stderr)
            return 2
        return validate(sys.argv[2], sys.argv[3])
    import importlib.metadata as md

    warnings.filterwarnings("ignore", message="The top-level `text` argument is missing")

    procs = []
    try:
        tg, tg_port = start("fake_telegram.py", "--token", TG_TOKEN, "--chat", str(TG_GROUP), "--chat", str(TG_USER_CHAT))
        procs.append(tg)
        sl, sl_port = start("fake_slack.py", "--token", SLACK_TOKEN, "--signing-secret", SLACK_SECRET,
                            "--channel", f"{SLACK_CHANNEL}:approvals", "--user", "U0ALICE", "--user", "U0BOB")
        procs.append(sl)
        for name, fn in (("telegram", lambda: asyncio.run(telegram_checks(tg_port))), ("slack", lambda: slack_checks(sl_port))):
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                import traceback
                check(f"{name} checks ran to the end", False, traceback.format_exc()[-1500:])
        # what the SDKs produced must pass --validate too
        problems = []
        validate_telegram(f"http://127.0.0.1:{tg_port}", problems)
        validate_slack(f"http://127.0.0.1:{sl_port}", problems)
        check("--validate accepts what the SDKs sent", not problems, problems)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
    failed = [c for c in CHECKS if not c["ok"]]
    print(json.dumps({
        "ok": not failed, "passed": len(CHECKS) - len(failed), "failed": failed,
        "python-telegram-bot": md.version("python-telegram-bot"), "slack_sdk": md.version("slack_sdk"),
        "checks": [c["name"] for c in CHECKS],
    }), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
