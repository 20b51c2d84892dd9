-- What the channel bills for each message dispatchd sent (docs/channels.md, "What each
-- message costs"): for WhatsApp the `pricing` object of the message's status webhooks. One
-- row per outbox row, written by the delivery report that carries it; a later report of the
-- same message replaces it (Meta repeats the object on sent, delivered and read).
--   category        store/send_pricing.h's PricingCategory; 'unknown' for one this version
--                   does not know (the text as sent is in the delivery's audit event)
--   pricing_model   'CBP', 'PMP' or 'unknown'
--   pricing_type    'regular', 'free_customer_service', 'free_entry_point', 'unknown', or
--                   NULL when the report gave none
--   origin          the conversation's origin type, when given (older pricing model)
--   cost            what the message cost at the configured prices when it was reported (0
--                   when not billable; NULL when billable with no price for its category)
--   currency        the prices' currency ('' when no prices are configured)
CREATE TABLE send_pricing (
  id            INTEGER PRIMARY KEY,
  action_id     INTEGER NOT NULL UNIQUE REFERENCES actions (id),
  message_id    INTEGER NOT NULL REFERENCES inbox (id),
  category      TEXT NOT NULL
                CHECK (category IN ('marketing', 'marketing_lite', 'utility', 'authentication',
                                    'authentication_international', 'service', 'referral_conversion', 'unknown')),
  billable      INTEGER NOT NULL CHECK (billable IN (0, 1)),
  pricing_model TEXT NOT NULL CHECK (pricing_model IN ('CBP', 'PMP', 'unknown')),
  pricing_type  TEXT CHECK (pricing_type IN ('regular', 'free_customer_service', 'free_entry_point', 'unknown')),
  origin        TEXT,
  cost          REAL,
  currency      TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX send_pricing_message ON send_pricing (message_id);

-- v_messages gains what the channel billed: the category of its last priced send, whether
-- any was billable, and the sum of their costs (NULL when one billable send has no price).
DROP VIEW v_messages;
CREATE VIEW v_messages AS
  SELECT id AS message_id, channel, provider_message_id, conversation_id, sender, received_at, text, state, outcome,
         message_type,
         (SELECT CASE WHEN count(*) = count(a.cost_usd) THEN coalesce(sum(a.cost_usd), 0) END
          FROM attempts a WHERE a.message_id = inbox.id) AS cost_usd,
         coalesce(turn_id, id) AS turn_id,
         (SELECT p.category FROM send_pricing p WHERE p.message_id = inbox.id
          ORDER BY p.action_id DESC LIMIT 1) AS send_category,
         (SELECT max(p.billable) FROM send_pricing p WHERE p.message_id = inbox.id) AS send_billable,
         (SELECT CASE WHEN count(*) = count(p.cost) THEN sum(p.cost) END
          FROM send_pricing p WHERE p.message_id = inbox.id) AS send_cost,
         (SELECT max(p.currency) FROM send_pricing p WHERE p.message_id = inbox.id) AS send_currency
  FROM inbox;
