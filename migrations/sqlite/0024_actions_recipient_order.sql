-- Sends to one counterpart leave in order: begin_send passes over a message while one
-- queued before it to the same recipient on the same channel is still approved or sending
-- (store/outbox.h).
--   actions.queued   the row's place in that line when it is not its id: a proposal staff
--                    approve joins the line then, behind every row there is (one more than
--                    the largest id); NULL for a row added approved
-- Through actions_recipient that check would read every action ever sent to the recipient
-- for its status: thousands for a long-time customer. This partial index holds only the
-- rows not yet sent, a handful at any time.
ALTER TABLE actions ADD COLUMN queued INTEGER;
CREATE INDEX actions_recipient_unsent ON actions (recipient) WHERE status IN ('approved', 'sending');
