"""orders by status

Revision ID: 0002
Revises: 0001
Create Date: 2024-07-01 09:00:00

"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("gsi1", "shop", ["gsi1pk", "gsi1sk"], dynamodb_projection="ALL")
    # Added by hand: orders written before this revision get the index keys that the key
    # templates of Order give new ones.
    op.backfill(
        "shop",
        templates={"gsi1pk": "STATUS#{status}", "gsi1sk": "ORDER#{order_id}"},
        where={"$type": "Order"},
    )


def downgrade() -> None:
    op.drop_index("gsi1", table_name="shop")
    op.backfill("shop", values={"gsi1pk": None, "gsi1sk": None}, where={"$type": "Order"})
