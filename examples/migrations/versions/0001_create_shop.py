"""create shop

Revision ID: 0001
Revises:
Create Date: 2024-06-01 09:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "shop",
        sa.Column("pk", sa.String(), nullable=False),
        sa.Column("sk", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("pk", "sk"),
    )


def downgrade() -> None:
    op.drop_table("shop")
