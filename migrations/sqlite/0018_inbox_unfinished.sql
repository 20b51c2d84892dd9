-- take_next passes over a message while an earlier one of its conversation is unfinished.
-- Through inbox_conversation that check read every earlier message of the conversation for
-- its state: hundreds for a long-time customer, each a random page, from disk on a long
-- history. This partial index holds only the unfinished messages, a handful at any time.
CREATE INDEX inbox_unfinished ON inbox (conversation_id, id) WHERE state IN ('received', 'processing');
