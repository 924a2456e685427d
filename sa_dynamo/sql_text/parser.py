"""SQL text -> a sqlglot tree, with what PartiQL adds to SQL's grammar."""

from __future__ import annotations

import itertools
import re

from sqlglot import exp, parser, tokens
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from ..exc import TranslationError
from ..limits import FUNCTIONS

_ANSI = re.compile("\x1b\\[[0-9;]*m")


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
    if "\x00" in sql:
        raise TranslationError(
            "DynamoDB PartiQL cannot express a NUL character in SQL text: pass the value as a parameter"
        )
    try:
        raw = tokens.Tokenizer().tokenize(sql)
        statements = [s for s in _Parser().parse(raw, sql) if s is not None]
    except SqlglotError as error:
        raise TranslationError(f"cannot parse the SQL text: {_ANSI.sub('', str(error))}") from error
    if len(statements) != 1:
        what = "more than one statement" if statements else "an empty statement"
        raise TranslationError(f"DynamoDB PartiQL cannot express {what}: execute one statement at a time")
    return statements[0]
