"""A letter's bytes read into what the front needs: who, to whom, the text, attachments.

Nothing here trusts the letter: malformed MIME, unknown or wrong charsets and broken
headers give the best text that can be had, never an exception. The text is the plain
part, or the HTML part converted (see :mod:`scriba.mail.htmltext`); ``.star`` attachments
are kept as text for proposals.
"""

from __future__ import annotations

import codecs
import email
import email.header
import email.policy
import hashlib
from dataclasses import dataclass, field
from email.message import Message
from email.utils import getaddresses, parseaddr

from scriba.mail.htmltext import html_to_text
from scriba.service.inbound import message_id_of  # the pipe keeps letters under it too

MAX_ATTACHMENT_TEXT = 256 * 1024


@dataclass
class Letter:
    message_id: str
    sender: str  # the From address, lower case
    sender_name: str
    recipients: list[str]
    subject: str
    in_reply_to: str
    references: list[str]
    text: str
    attachments: dict[str, str] = field(default_factory=dict)
    automatic: str = ""  # why the letter is an automatic one (never answered), or ""
    looped: bool = False
    date: str = ""


def unsigned_identity(letter: Letter) -> str | None:
    """The identity of a letter without a signature (to a personal address): who wrote it,
    its Date and what it says. None without a Date: two undated letters alike may well be
    two letters (vote the same twice in two rounds)."""
    if not letter.date:
        return None
    text = "\n".join(line.rstrip() for line in letter.text.split("\n")).strip()
    parts = ["unsigned", letter.sender, letter.date, letter.subject, text,
             *sorted(f"{name}\0{body}" for name, body in letter.attachments.items())]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


# Labels read as the charsets their writers really use (the WHATWG Encoding Standard's
# mapping): a Windows dash in a letter labelled ISO-8859-1 is a dash, not a control
# character. A letter labelled US-ASCII with 8-bit bytes lies: UTF-8 is tried first.
_SUPERSETS = {"iso8859_1": ["cp1252", "latin_1"], "ascii": ["utf-8", "cp1252"],
              "iso8859_9": ["cp1254", "iso8859_9"], "iso8859_11": ["cp874", "iso8859_11"],
              "gb2312": ["gbk"], "euc_kr": ["cp949", "euc_kr"]}


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Bytes as text: the declared charset (as its real-world superset) if it decodes
    cleanly, then UTF-8, then Windows-1252 (what letters that lie about their charset are
    usually written in)."""
    try:
        declared = codecs.lookup(charset).name.replace("-", "_") if charset else None
    except LookupError:
        declared = None
    candidates = _SUPERSETS.get(declared or "", [declared]) if declared else []
    for candidate in [*candidates, "utf-8"]:
        try:
            return data.decode(candidate)
        except (LookupError, UnicodeDecodeError):
            continue
    return data.decode("cp1252", errors="replace")


def unflow(text: str, delsp: bool) -> str:
    """A format=flowed text (RFC 3676) re-joined: a line ending in a space goes on in the
    next one of the same quote depth (the space dropped too with DelSp=yes); one leading
    space of stuffing removed. Quoted lines keep their ``>`` marks."""
    out: list[str] = []
    joined: str | None = None
    depth_of_joined = 0
    for line in text.replace("\r\n", "\n").split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        body = line[depth:]
        body = body[1:] if body.startswith(" ") else body
        if joined is not None and depth != depth_of_joined:
            out.append(_quoted(depth_of_joined, joined))
            joined = None
        if body.endswith(" ") and body != "-- ":
            joined = (joined or "") + (body[:-1] if delsp else body)
            depth_of_joined = depth
        else:
            out.append(_quoted(depth, (joined or "") + body))
            joined = None
    if joined is not None:
        out.append(_quoted(depth_of_joined, joined))
    return "\n".join(out)


def _quoted(depth: int, text: str) -> str:
    return f"{'>' * depth} {text}" if depth else text


def _header(message: Message, name: str) -> str:
    try:
        value = message.get(name)
    except Exception:  # noqa: BLE001 - a malformed header is read as missing
        return ""
    if value is None:
        return ""
    try:
        return " ".join(str(value).split())
    except Exception:  # noqa: BLE001
        return ""


def _payload(part: Message) -> str:
    try:
        data = part.get_payload(decode=True)
    except Exception:  # noqa: BLE001
        data = None
    if data is None:
        raw = part.get_payload()
        return raw if isinstance(raw, str) else ""
    try:
        charset = part.get_content_charset()
        flowed = str(part.get_param("format") or "").lower() == "flowed"
        delsp = str(part.get_param("delsp") or "").lower() == "yes"
    except Exception:  # noqa: BLE001
        charset, flowed, delsp = None, False, False
    text = decode_bytes(data, charset)
    if flowed and part.get_content_type() == "text/plain":
        return unflow(text, delsp)
    return text


def _automatic(message: Message, sender: str) -> str:
    auto = _header(message, "Auto-Submitted").lower()
    if auto and not auto.startswith("no"):
        return f"Auto-Submitted: {auto}"
    precedence = _header(message, "Precedence").lower()
    if precedence in ("bulk", "junk", "list", "auto_reply"):
        return f"Precedence: {precedence}"
    for name in ("X-Autoreply", "X-Autorespond", "X-Auto-Response-Suppress"):
        if _header(message, name):
            return name
    if _header(message, "Return-Path").strip() == "<>":
        return "null sender (Return-Path)"
    local = sender.split("@", 1)[0]
    if not sender or local in ("mailer-daemon", "postmaster") or local.startswith(
            ("mailer-daemon", "noreply", "no-reply")):
        return f"sender {sender or '<>'}"
    if message.get_content_type() == "multipart/report":
        return "delivery report"
    return ""


def read_letter(raw: bytes, envelope_from: str | None = None,
                envelope_to: list[str] | None = None, loop_mark: str = "") -> Letter:
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    name, sender = parseaddr(_header(message, "From"))
    sender = sender.strip().lower()
    recipients = [addr.lower() for addr in (envelope_to or []) if addr]
    for header in ("Delivered-To", "X-Original-To", "To", "Cc"):
        try:
            values = message.get_all(header) or []
        except Exception:  # noqa: BLE001
            values = []
        recipients += [addr.lower() for _, addr in getaddresses([str(v) for v in values])
                       if addr]
    subject = decode_header(_header(message, "Subject"))
    text, html = "", ""
    attachments: dict[str, str] = {}
    parts = message.walk() if message.is_multipart() else [message]
    for part in parts:
        if part.is_multipart():
            continue
        filename = part.get_filename()
        ctype = part.get_content_type()
        disposition = (part.get("Content-Disposition") or "").lower()
        if filename or disposition.startswith("attachment"):
            if filename and filename.lower().endswith(".star"):
                attachments[filename] = _payload(part)[:MAX_ATTACHMENT_TEXT]
            continue
        if ctype == "text/plain" and not text:
            text = _payload(part)
        elif ctype == "text/html" and not html:
            html = _payload(part)
    if not text and html:
        text = html_to_text(html)
    automatic = "" if envelope_from is None or envelope_from.strip("<> ") else "null sender"
    automatic = automatic or _automatic(message, sender)
    references = _header(message, "References").split()
    looped = bool(loop_mark) and any(loop_mark.lower() in str(v).lower()
                                     for v in (message.get_all("X-Loop") or []))
    return Letter(message_id=message_id_of(raw), sender=sender, sender_name=name,
                  recipients=recipients, subject=subject,
                  in_reply_to=_header(message, "In-Reply-To"), references=references,
                  text=text.replace("\r\n", "\n"), attachments=attachments,
                  automatic=automatic, looped=looped, date=_header(message, "Date"))


def decode_header(value: str) -> str:
    try:
        return str(email.header.make_header(email.header.decode_header(value)))
    except Exception:  # noqa: BLE001 - an undecodable subject is shown as it came
        return value
