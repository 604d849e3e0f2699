-- One pinned thread per warning and city (issue 43 #2), written by the site's own account: an
-- account that cannot sign in, be blocked or muted, labelled as the site. A thread keeps the id
-- of the warning it is about now (an update of the warning carries it on); at most one a city.
ALTER TABLE users ADD COLUMN is_system INTEGER NOT NULL DEFAULT 0 CHECK (is_system IN (0, 1));
ALTER TABLE posts ADD COLUMN warning_id TEXT;
CREATE UNIQUE INDEX posts_warning_thread ON posts (city_id, warning_id) WHERE warning_id IS NOT NULL;
