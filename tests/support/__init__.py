"""Test helpers that run real network services next to DynamoDB Local (no mocks)."""
