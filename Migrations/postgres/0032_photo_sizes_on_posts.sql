-- PostgreSQL version of sqlite/0032: a photo's sizes kept on the posts that show it.
ALTER TABLE posts ADD COLUMN photo_width INTEGER;
ALTER TABLE posts ADD COLUMN photo_height INTEGER;
ALTER TABLE posts ADD COLUMN photo_small_width INTEGER;
UPDATE posts SET photo_width = ph.width, photo_height = ph.height, photo_small_width = ph.small_width
FROM photos ph WHERE ph.hash = posts.photo_hash;
