-- PostgreSQL twin of ../sqlite/0035_channel_names.sql (its comments say why): channels are
-- plug-ins and the channel columns hold a registered channel's name, so the CHECK
-- (channel IN ('whatsapp', 'gmail')) of 0001 and 0005 is dropped in place. PostgreSQL named
-- each <table>_channel_check; IF EXISTS lets a database whose constraint was already dropped
-- by hand migrate too. NOT NULL, the inbox's UNIQUE (channel, provider_message_id) and the
-- other columns' CHECKs stay.
ALTER TABLE inbox DROP CONSTRAINT IF EXISTS inbox_channel_check;
ALTER TABLE poll_cursors DROP CONSTRAINT IF EXISTS poll_cursors_channel_check;
