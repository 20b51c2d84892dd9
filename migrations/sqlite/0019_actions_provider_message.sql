-- A delivery report (WhatsApp's sent, delivered, read and failed statuses: two or three for
-- every reply) finds its action by the provider's message id or by our idempotency key.
-- Only the key had an index, so the OR of the two scanned the whole actions table in id
-- order, on the event loop, for every report: on a year of history a million rows each.
CREATE INDEX actions_provider_message ON actions (provider_message_id);
