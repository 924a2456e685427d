"""SQL text -> a sqlglot tree, with what PartiQL adds to SQL's grammar."""

from __future__ import annotations

import itertools
import re

from sqlglot import exp, parser, tokens
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.tokens import TokenType

from ..dbapi.limits import FUNCTIONS
from ..exc import TranslationError, cannot_express

_ANSI = re.compile("\x1b\\[[0-9;]*m")
_MISSING = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")
_CONTEXT = 30  # characters of the text shown before the place it cannot parse
STATEMENT_WORDS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "EXISTS", "WITH", "("})
# The first line of str(compiled) of a statement the client computes: what follows is only the
# statements it sends, which, run as SQL text, would do something else; parse() refuses it.
COMPUTED_HEADER = "-- sa_dynamo computes this statement on the client; the statements it sends:\n"


class _Parser(parser.Parser):
    """sqlglot's parser plus what PartiQL adds: several SET/REMOVE clauses in UPDATE,
    ``RETURNING ALL OLD *``, and ``?`` placeholders that keep where they start in the text
    (parameters are positional, and sqlglot's tree does not keep source order)."""

    # DynamoDB's functions stay anonymous calls under their own names.
    FUNCTIONS = {name: f for name, f in parser.Parser.FUNCTIONS.items() if name.lower() not in FUNCTIONS}
    PLACEHOLDER_PARSERS = {
        **parser.Parser.PLACEHOLDER_PARSERS,
        TokenType.PLACEHOLDER: lambda self: self.expression(exp.Placeholder(), self._prev),
    }

    def _parse_update(self) -> exp.Update:
        # sqlglot keeps only the last of several SET clauses; REMOVE a is taken as SET a = NULL,
        # which is what NULL means here (attribute absent).
        table = self._parse_table_parts()
        if not self._match_texts(("SET", "REMOVE"), advance=False):  # else REMOVE is read as an alias
            table.set("alias", self._parse_table_alias(self.UPDATE_ALIAS_TOKENS))
        assignments: list[exp.Expression] = []
        while self._match(TokenType.SET) or self._match_text_seq("REMOVE"):
            if self._prev.token_type is TokenType.SET:
                assignments.extend(self._parse_csv(self._parse_update_assignment))
                continue
            path = self._parse_column()
            if path is None:
                self.raise_error("Expected an attribute after REMOVE")
            assignments.append(exp.EQ(this=path, expression=exp.Null()))
        return exp.Update(
            this=table,
            expressions=assignments,
            from_=self._parse_from(joins=True),
            where=self._parse_where(),
            returning=self._parse_returning(),
        )

    def _parse_returning(self) -> exp.Returning | None:
        for which, image in itertools.product(("ALL", "MODIFIED"), ("OLD", "NEW")):
            if self._match_text_seq("RETURNING", which, image, "*"):
                return exp.Returning(expressions=[exp.var(f"{which} {image} *")])
        return super()._parse_returning()


def parse(sql: str) -> exp.Expression:
    """The one statement in ``sql``; a TranslationError for text that is not one statement."""
    if sql.startswith(COMPUTED_HEADER):
        raise TranslationError(
            "this text is str() of a statement sa_dynamo computes on the client (a join, GROUP BY, "
            "DISTINCT, an aggregate, a subquery, a write by a read): only the statements it sends, "
            "which do something else; execute the statement itself, or write it as SQL"
        )
    if "\x00" in sql:
        raise TranslationError(cannot_express("a NUL character in SQL text", "pass the value as a parameter"))
    try:
        raw = tokens.Tokenizer().tokenize(sql)
        statements = [s for s in _Parser().parse(raw, sql) if s is not None]
    except ParseError as error:
        raise TranslationError(_where_and_what(error, sql)) from None
    except SqlglotError as error:
        raise TranslationError(f"cannot parse the SQL text: {_ANSI.sub('', str(error))}") from None
    if len(statements) != 1:
        what = "more than one statement" if statements else "an empty statement"
        raise TranslationError(cannot_express(what, "execute one statement at a time"))
    return statements[0]


def _where_and_what(error: ParseError, sql: str) -> str:
    """Where sqlglot stopped (line, column, the text before it on its line) and what it expected
    there, in words (its own message names the tree node it could not complete)."""
    first_word = (sql.split(None, 1) or [""])[0].upper()
    if first_word == "PRAGMA":
        return (
            "PRAGMA is SQLite's: DynamoDB has no such settings (and no foreign keys to switch on); "
            "run it on SQLite engines only, e.g. in a connect listener that checks engine.dialect.name"
        )
    if not error.errors:
        return f"cannot parse the SQL text: {_ANSI.sub('', str(error))}"
    first = error.errors[0]
    token, before = first["highlight"], first["start_context"].rsplit("\n", 1)[-1]
    column = first["col"] - len(token) + 1
    shown = (before if len(before) <= _CONTEXT else "..." + before[-_CONTEXT:]) + token
    where = f"cannot parse the SQL text at line {first['line']}, column {column} ({shown!r})"
    if first_word not in STATEMENT_WORDS:
        return f"{where}: {first_word!r} starts no statement; write SELECT, INSERT, UPDATE or DELETE"
    description = first["description"]
    missing = _MISSING.match(description)
    expecting = re.match(r"Expect(?:ing|ed) (.+?)(?: but got .*)?$", description)
    expected = _expected(missing) if missing else _named(expecting.group(1)) if expecting else None
    if expected is None:
        return f"{where}: {token!r} is not expected there"
    if not first["end_context"].strip():
        return f"{where}: the text ends after {token!r}, where {expected} was expected"
    return f"{where}: {expected} was expected at {token!r}"


def _named(expected: str) -> str:
    """sqlglot's "Expecting )" and "Expected table name" as a sentence says them."""
    return f"a {expected}" if expected[0].isalpha() else repr(expected)


def _expected(missing: re.Match) -> str:
    keyword, node = missing.groups()
    if keyword in ("this", "expression"):
        return "an expression" if node != "Where" else "a condition"
    return f"the {keyword} of {node}"
