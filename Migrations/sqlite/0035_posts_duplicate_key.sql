-- The duplicate rule's key of a post's text (PostingRules.duplicateKey, hashed): a new post is
-- compared with its author's recent ones by it, in the statement that reads their counts, rather
-- than by reading and folding every recent text (a prolific author's post cost grew with them).
ALTER TABLE posts ADD COLUMN duplicate_key INTEGER;
