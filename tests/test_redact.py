"""The one redaction helper (`graph_agent.common.redact`): every form a credential takes in a
connection URI, an endpoint URL or a DSN, wherever it stands in a message or a traceback.

The remote back end, the executor (attempts are checkpointed) and the checkpointer's messages
all use it; `graph_agent.checkpointing.redact` is the same function.
"""

from __future__ import annotations

import pytest

from graph_agent import checkpointing
from graph_agent.common.redact import public_url, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # userinfo password, any scheme
        ("postgresql://u:pw@h:5/db", "postgresql://u:***@h:5/db"),
        ("https://alice:s3cr3t@gpu-box:8080/models/x", "https://alice:***@gpu-box:8080/models/x"),
        ("https://alice:p@ss@host/x", "https://alice:***@host/x"),  # a raw '@' in it
        ("postgresql://u@h/db", "postgresql://u@h/db"),  # a user alone is not a secret
        # secret query parameters; the others stay (they say what is configured)
        (
            "postgresql://h/db?sslmode=require&password=pw",
            "postgresql://h/db?sslmode=require&password=***",
        ),
        ("https://h/x?api_key=SECRET&x=1", "https://h/x?api_key=***&x=1"),
        (
            "https://h/x?apikey=S&token=T&access_token=A",
            "https://h/x?apikey=***&token=***&access_token=***",
        ),
        ("https://h/x?key=K&secret=S", "https://h/x?key=***&secret=***"),
        ("https://b.blob/c?sv=1&sig=SIG&se=2", "https://b.blob/c?sv=1&sig=***&se=2"),
        (
            "https://s3/o?X-Amz-Signature=abc&Signature=d",
            "https://s3/o?X-Amz-Signature=***&Signature=***",
        ),
        ("https://h/x?Password=P", "https://h/x?Password=***"),
        # keyword/value DSNs
        ("host=db user=u password=pw dbname=d", "host=db user=u password=*** dbname=d"),
        ("host=db password = 'a b\\' c' port=5", "host=db password = *** port=5"),
        ("sslpassword=k host=h", "sslpassword=*** host=h"),
        # tokens
        ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer ***"),
        ("Authorization: Basic YWxpY2U6cHc=", "Authorization: Basic ***"),
        # names that say "secret" without being on the exact list
        (
            "https://h/x?x-api-key=A&api_token=B&access_key=C&subscription-key=D&model=m",
            "https://h/x?x-api-key=***&api_token=***&access_key=***&subscription-key=***&model=m",
        ),
        # JSON a server echoes back in an error
        ('{"api_key": "S", "model": "m"}', '{"api_key": "***", "model": "m"}'),
        ("token hf_" + "a" * 34 + " here", "token hf_*** here"),
        # nothing secret: unchanged
        ("http://127.0.0.1:8080/models/a/b?wait_for_model=true", None),
        ("connection refused; is the server running?", None),
        ("", None),
    ],
)
def test_redact_masks_every_form(text, expected):
    assert redact(text) == (text if expected is None else expected)


def test_redact_works_inside_a_traceback():
    trace = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 3, in f\n'
        "httpx.HTTPStatusError: 500 Server Error for url: "
        "http://alice:PASSWORD@127.0.0.1:9/models/m?api_key=SECRET&x=1\n"
        "psycopg.OperationalError: connection to 'host=db password=PGPASS' failed\n"
    )
    out = redact(trace)
    for secret in ("PASSWORD", "SECRET", "PGPASS"):
        assert secret not in out
    assert "http://alice:***@127.0.0.1:9/models/m?api_key=***&x=1" in out


def test_public_url_keeps_only_scheme_host_port_and_path():
    assert public_url("http://u:p@127.0.0.1:9/gen?api_key=s") == "http://127.0.0.1:9/gen"
    assert public_url("https://u:p@[::1]:8080/v1?token=t") == "https://[::1]:8080/v1"
    assert public_url("https://h.example/models/a/b") == "https://h.example/models/a/b"


def test_the_checkpointer_uses_the_same_helper(monkeypatch):
    assert checkpointing.redact is redact
    monkeypatch.setenv(checkpointing.ENV_VAR, "postgresql://h:5/db?password=pw&sslmode=require")
    assert checkpointing.describe() == "Postgres postgresql://h:5/db?password=***&sslmode=require"
    error = checkpointing._unreachable("postgresql://u:pw@h/db", OSError("bad password=pw"))
    assert "pw" not in str(error).replace("password", "")
