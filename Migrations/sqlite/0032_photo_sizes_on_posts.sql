-- A board reads its photos' sizes with the posts (for `width`, `height` and the srcset), not
-- from `photos` row by row: a photo's sizes never change (its address is its content's hash).
ALTER TABLE posts ADD COLUMN photo_width INTEGER;
ALTER TABLE posts ADD COLUMN photo_height INTEGER;
ALTER TABLE posts ADD COLUMN photo_small_width INTEGER;
UPDATE posts SET photo_width = (SELECT width FROM photos WHERE hash = posts.photo_hash),
                 photo_height = (SELECT height FROM photos WHERE hash = posts.photo_hash),
                 photo_small_width = (SELECT small_width FROM photos WHERE hash = posts.photo_hash)
WHERE photo_hash IS NOT NULL;
