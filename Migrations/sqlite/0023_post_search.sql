-- Search in posts (issue 45 #1): a trigram index over every post's text, so that any substring
-- of three characters or more, in any script ("mbrel", "우산이"), is found from the index, and
-- shorter ones by reading it whole. An external-content table: the text stays in `posts` alone,
-- and the triggers keep the index with it (a copy's inserted rows index themselves).
CREATE VIRTUAL TABLE post_search USING fts5(body, content = 'posts', content_rowid = 'id', tokenize = 'trigram');
INSERT INTO post_search (post_search) VALUES ('rebuild');
CREATE TRIGGER post_search_insert AFTER INSERT ON posts BEGIN
    INSERT INTO post_search (rowid, body) VALUES (new.id, new.body);
END;
CREATE TRIGGER post_search_delete AFTER DELETE ON posts BEGIN
    INSERT INTO post_search (post_search, rowid, body) VALUES ('delete', old.id, old.body);
END;
CREATE TRIGGER post_search_update AFTER UPDATE OF body ON posts BEGIN
    INSERT INTO post_search (post_search, rowid, body) VALUES ('delete', old.id, old.body);
    INSERT INTO post_search (rowid, body) VALUES (new.id, new.body);
END;
