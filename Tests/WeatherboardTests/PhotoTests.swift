import CPhotos
import Foundation
import HTTPServer
import HTTPTestSupport
import Synchronization
import Testing
@testable import Weatherboard

/// Issue 44: one photo with a post, decoded and written anew with no metadata, served like a
/// static file, blurred until it is safe, refused again once removed.
@Suite(.serialized, .onEveryEngine) struct PhotoTests {
    /// The fixtures, made once by `Fixtures/photos/make-photos.py` (Pillow) in a folder of their
    /// own, and a HEIC written from one of them by libvips (Pillow writes none).
    static let fixtures: String = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wb-photos-\(UUID().uuidString)").path
        let script = AppConfiguration.repositoryFolder("Tests/WeatherboardTests/Fixtures/photos") + "/make-photos.py"
        guard let run = try? ChildProcess(["/usr/bin/env", "python3", script, folder]), run.wait() == 0 else {
            fatalError("the photo fixtures need python3 with Pillow (pip install pillow): \(script)")
        }
        let jpeg = [UInt8](FileManager.default.contents(atPath: folder + "/other.jpg") ?? Data())
        var heif = wb_photo_bytes()
        guard jpeg.withUnsafeBytes({ wb_photo_write_heif($0.baseAddress, $0.count, &heif) }) == 0 else {
            fatalError("libvips cannot write HEIC here: \(String(cString: wb_photo_error()))")
        }
        _ = FileManager.default.createFile(atPath: folder + "/photo.heic", contents: Data(bytes: heif.data, count: heif.length))
        wb_photo_free_bytes(&heif)
        return folder
    }()

    static func fixture(_ name: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: fixtures + "/" + name) ?? Data())
    }

    static func upload(_ name: String, type: String? = nil) -> Browser.Upload {
        let types = ["jpg": "image/jpeg", "png": "image/png", "webp": "image/webp", "heic": "image/heic"]
        return Browser.Upload(filename: name, contentType: type ?? types[String(name.split(separator: ".").last ?? "")] ?? "application/octet-stream",
                              bytes: fixture(name))
    }

    /// Posts `text` with the fixture `file` on Seoul's board from its page.
    @discardableResult
    static func post(_ browser: Browser, _ text: String, photo file: String, alt: String = "", slug: String = "seoul") throws -> (WireResponse, MarkupDocument?) {
        try browser.get("/city/\(slug)")
        return try browser.postMultipart("/city/\(slug)/posts", [("body", text), ("photo_alt", alt)], files: [upload(file)])
    }

    /// What Pillow reads in `bytes`: its format, size, metadata keys and the colour of two corners.
    static func pillow(_ bytes: [UInt8]) throws -> [String: Any] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wb-photo-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = """
            import json, sys
            from PIL import Image
            im = Image.open(sys.argv[1]); im.load()
            rgb = im.convert("RGB"); w, h = im.size
            print(json.dumps({"format": im.format, "width": w, "height": h, "info": sorted(k for k in im.info.keys() if k not in ("jfif", "jfif_version", "jfif_unit", "jfif_density", "progressive", "progression", "loop", "background", "duration", "timestamp", "dpi")),
                              "exif": len(im.getexif()), "topLeft": rgb.getpixel((4, 4)), "topRight": rgb.getpixel((w - 5, 4))}))
            """
        let out = path + ".json"
        let run = try ChildProcess(shell: "exec python3 -c '\(script)' '\(path)' > '\(out)'")
        #expect(run.wait() == 0)
        defer { try? FileManager.default.removeItem(atPath: out) }
        return try JSONSerialization.jsonObject(with: FileManager.default.contents(atPath: out) ?? Data()) as? [String: Any] ?? [:]
    }

    static func isRed(_ pixel: Any?) -> Bool {
        guard let rgb = pixel as? [Int], rgb.count == 3 else { return false }
        return rgb[0] > 200 && rgb[1] < 60 && rgb[2] < 60
    }

    /// The photos' images on the board as `browser` sees it.
    static func images(_ browser: Browser, _ path: String = "/city/seoul") throws -> [MarkupDocument.Node] {
        try browser.get(path).1.nodes("//article[@data-post-id]//img[@data-photo]")
    }

    func member(_ app: AppHarness, _ name: String, standing: Bool = true) throws -> Browser {
        let browser = app.browser()
        try browser.signUp(name)
        if standing { try app.inGoodStanding(name) }
        return browser
    }

    @Test func aPhonesPhotoIsStoredUprightWithNoMetadataAtAll() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let poster = try member(app, "skywatcher")
        for (index, file) in ["gps-rotated.jpg", "text.png", "photo.webp", "photo.heic"].enumerated() {
            let (answer, _) = try Self.post(poster, "Sky over the river, take \(index)", photo: file, alt: "The sky, \(file)")
            #expect(answer.status == 303, "\(file) was taken")
        }
        let images = try Self.images(app.browser())
        #expect(images.count == 4)
        let forbidden = ["Exif", "GPS", "xpacket", "xmpmeta", "iCCP", "ICC_PROFILE", "tEXt", "iTXt", "PhoneMaker", "37.5665", "taken at home"]
        for image in images {
            let hash = try #require(image["data-photo"])
            #expect(image["alt"]?.hasPrefix("The sky, ") == true)
            #expect(image["srcset"]?.hasPrefix("/photos/\(hash).480.webp ") == true && image["srcset"]?.hasSuffix(", /photos/\(hash).webp \(image["width"] ?? "")w") == true)
            #expect(image["src"] == "/photos/\(hash).jpg", "the JPEG for a browser that reads no srcset")
            #expect(image["loading"] == "lazy")
            #expect(image["data-blurred"] == nil, "a member with standing's photo is shown at once")
            for (variant, type) in [("webp", "image/webp"), ("480.webp", "image/webp"), ("jpg", "image/jpeg")] {
                let served = try app.browser().get("/photos/\(hash).\(variant)").0
                #expect(served.status == 200)
                #expect(served.headers["Content-Type"] == type)
                #expect(served.headers["Cache-Control"] == "public, max-age=31536000, immutable")
                #expect(served.headers["X-Content-Type-Options"] == "nosniff")
                #expect(served.headers["Content-Security-Policy"]?.contains("sandbox") == true)
                #expect(served.headers["ETag"] != nil)
                let text = String(decoding: served.body, as: UTF8.self)
                for word in forbidden { #expect(!text.contains(word), "\(hash).\(variant) holds \(word)") }
                let facts = try Self.pillow(served.body)
                #expect((facts["info"] as? [String]) == [], "\(hash).\(variant) carries \(facts["info"] ?? "")")
                #expect(facts["exif"] as? Int == 0)
                if variant == "480.webp" { #expect(facts["width"] as? Int ?? 0 <= 480) }
            }
        }
        // The phone's photo (1200 × 800 stored, orientation 6) is upright: 800 × 1200, its red
        // corner turned from the top left to the top right.
        let phone = try #require(images.first { $0["alt"] == "The sky, gps-rotated.jpg" })
        #expect(phone["width"] == "800" && phone["height"] == "1200")
        let jpeg = try Self.pillow(try app.browser().get("/photos/\(phone["data-photo"] ?? "").jpg").0.body)
        #expect(jpeg["width"] as? Int == 800 && jpeg["height"] as? Int == 1200)
        #expect(Self.isRed(jpeg["topRight"]) && !Self.isRed(jpeg["topLeft"]))
    }

    @Test func everyBadFileGetsAClearAnswerWithTheFormKept() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let poster = try member(app, "skywatcher")
        let cases: [(file: String, status: Int, says: String)] = [
            ("bomb.png", 413, "more than 40 megapixels"),
            ("truncated.jpg", 422, "damaged or cut short"),
            ("polyglot.jpg", 422, "something besides a photo"),
            ("script.jpg", 415, "not a JPEG, PNG, WebP or HEIC"),
            ("noise.jpg", 413, "larger than 12 MB"),
        ]
        for item in cases {
            let started = Date()
            let (answer, page) = try Self.post(poster, "Storm clouds at \(item.file)", photo: item.file, alt: "Alt for \(item.file)")
            let took = Date().timeIntervalSince(started)
            print("photo refusal \(item.file): \(answer.status) in \(String(format: "%.3f", took)) s")
            #expect(answer.status == item.status, "\(item.file)")
            #expect(page?.text("//p[@id='post-error']")?.contains(item.says) == true, "\(item.file): \(page?.text("//p[@id='post-error']") ?? "")")
            #expect(page?.text("//textarea[@name='body']") == "Storm clouds at \(item.file)", "the text is kept")
            #expect(page?.nodes("//input[@name='photo_alt']").first?["value"] == "Alt for \(item.file)", "the description is kept")
            #expect(page?.count("//form[@enctype='multipart/form-data']//input[@type='file'][@name='photo']") == 1)
        }
        #expect(try app.count("SELECT count(*) FROM posts") == 0)
        #expect(try app.count("SELECT count(*) FROM photos") == 0)
        #expect(try app.browser().get("/city/seoul").0.status == 200, "the process is up")
    }

    @Test func aNewMembersPhotoIsBlurredForOthersUntilAModeratorOrThreeMembersWithStandingSaySo() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let newcomer = try member(app, "newcomer", standing: false)
        let admin = try member(app, "chief")
        try app.promoteToAdmin("chief")
        let reader = try member(app, "reader")
        try Self.post(newcomer, "First snow on the hill", photo: "gps-rotated.jpg")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))

        // Blurred with Show for a guest and another member; as it is for its author, who is told.
        for browser in [app.browser(), reader] {
            let page = try browser.get("/city/seoul").1
            #expect(page.count("//article[@data-post-id='\(postID)']//img[@data-photo][@data-blurred]") == 1)
            #expect(page.count("//article[@data-post-id='\(postID)']//button[@data-show-photo]") == 1)
        }
        let own = try newcomer.get("/city/seoul").1
        #expect(own.count("//article[@data-post-id='\(postID)']//img[@data-photo][not(@data-blurred)]") == 1)
        #expect(own.count("//article[@data-post-id='\(postID)']//button[@data-show-photo]") == 0)

        // The moderation queue shows it with Approve and Remove; approved, it is shown to all.
        let queue = try admin.get("/admin").1
        let hash = try #require(try Self.images(newcomer).first?["data-photo"])
        #expect(queue.count("//li[@data-photo-waiting='\(hash)']//form[@action='/admin/posts/\(postID)/photo/approve']") == 1)
        #expect(queue.count("//li[@data-photo-waiting='\(hash)']//form[@action='/admin/posts/\(postID)/photo/remove']") == 1)
        #expect(try admin.post("/admin/posts/\(postID)/photo/approve", []).0.status == 303)
        #expect(try Self.images(reader).first?["data-blurred"] == nil)
        #expect(try admin.get("/admin").1.count("//li[@data-photo-waiting]") == 0)

        // Another: two agreements from members with standing and one from a new member leave it
        // blurred; the third from a member with standing shows it.
        try Self.post(newcomer, "Second look at the snow", photo: "photo.webp")
        let second = Int64(try app.count("SELECT max(id) FROM posts"))
        let agreeing = try ["one", "two", "three"].map { try member(app, "agree\($0)") }
        let fresh = try member(app, "freshface", standing: false)
        for browser in [agreeing[0], agreeing[1], fresh] {
            try browser.get("/city/seoul")
            #expect(try browser.post("/posts/\(second)/react", []).0.status == 303)
        }
        func blurred(_ browser: Browser) throws -> Bool {
            try browser.get("/city/seoul").1.count("//article[@data-post-id='\(second)']//img[@data-blurred]") == 1
        }
        #expect(try blurred(reader))
        try agreeing[2].get("/city/seoul")
        try agreeing[2].post("/posts/\(second)/react", [])
        #expect(try !blurred(reader))

        // A report blurs it at once for everyone but its author.
        try reader.get("/city/seoul")
        #expect(try reader.post("/posts/\(second)/report", [("reason", "spam")]).0.status == 303)
        #expect(try blurred(app.browser()))
        #expect(try blurred(agreeing[0]))
        #expect(try !blurred(newcomer))
        #expect(try admin.get("/admin").1.count("//li[@data-photo-waiting][@data-post-id='\(second)']") == 1)

        // A day on, with posts that were kept, the newcomer has standing: their next photo is shown at once.
        app.clock.advance(86_400 + 60)
        try Self.post(newcomer, "Third: the thaw", photo: "text.png")
        let third = Int64(try app.count("SELECT max(id) FROM posts"))
        #expect(try reader.get("/city/seoul").1.count("//article[@data-post-id='\(third)']//img[@data-photo][not(@data-blurred)]") == 1)
    }

    /// A member's post with `removed.jpg`, and an admin to remove it.
    func photoToRemove(_ app: AppHarness) throws -> (poster: Browser, admin: Browser, postID: Int64) {
        let poster = try member(app, "poster")
        let admin = try member(app, "chief")
        try app.promoteToAdmin("chief")
        try Self.post(poster, "Look at this", photo: "removed.jpg")
        return (poster, admin, Int64(try app.count("SELECT max(id) FROM posts")))
    }

    @Test func aRemovedPhotoIsRefusedAgainReencodedOrCropped() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let (poster, admin, postID) = try photoToRemove(app)
        let hash = try #require(try Self.images(poster).first?["data-photo"])
        try admin.get("/admin")
        #expect(try admin.post("/admin/posts/\(postID)/photo/remove", []).0.status == 303)
        // The post stays, without its photo; its files are gone from every address.
        let page = try app.browser().get("/city/seoul").1
        #expect(page.count("//article[@data-post-id='\(postID)']") == 1)
        #expect(page.count("//article[@data-post-id='\(postID)']//img[@data-photo]") == 0)
        for variant in ["webp", "480.webp", "jpg"] { #expect(try app.browser().get("/photos/\(hash).\(variant)").0.status == 404) }
        #expect(try app.count("SELECT count(*) FROM moderation_log WHERE action = 'photo_remove'") == 1)

        for file in ["removed.jpg", "removed-requality.jpg", "removed-cropped.jpg"] {
            let (answer, form) = try Self.post(poster, "Look at this again: \(file)", photo: file)
            #expect(answer.status == 422, "\(file)")
            #expect(form?.text("//p[@id='post-error']")?.contains("removed this photo before") == true, "\(file)")
        }
        #expect(try Self.post(poster, "Another sky altogether", photo: "other.jpg").0.status == 303)
    }

    /// Issue 61 #6: removing the whole post remembers its picture too (it was posted again at
    /// once), and restoring the post forgets it.
    @Test func aRemovedPostsPhotoIsRefusedAgainUntilThePostIsRestored() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let (poster, admin, postID) = try photoToRemove(app)
        try admin.get("/admin")
        #expect(try admin.post("/admin/posts/\(postID)/remove", [("reason", "Spam")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM posts WHERE id = ? AND removed_at IS NOT NULL", [postID]) == 1)
        let (answer, form) = try Self.post(poster, "Look at this again", photo: "removed-requality.jpg")
        #expect(answer.status == 422)
        #expect(form?.text("//p[@id='post-error']")?.contains("removed this photo before") == true)

        #expect(try admin.post("/admin/posts/\(postID)/restore", [("reason", "A mistake")]).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM removed_photos") == 0, "the restored post's picture is no longer refused")
        #expect(try Self.post(poster, "The same sky, a second look", photo: "removed-requality.jpg").0.status == 303)
    }

    /// The likeness the refusal uses, on the test's pictures: how many of 64 bits a re-encode,
    /// a 5 % crop and another picture differ by (printed for docs/security.md).
    @Test func theLikenessHashTellsTheSamePictureFromAnother() throws {
        func hash(_ name: String) throws -> UInt64 {
            let bytes = Self.fixture(name)
            guard case .success(let format) = PhotoFormat.recognise(bytes[...]) else { throw PhotoRefusal.notAPhoto }
            var hash: UInt64 = 0
            #expect(bytes.withUnsafeBytes { wb_photo_difference_hash($0.baseAddress, $0.count, format.rawValue, &hash) } == 0)
            return hash
        }
        let removed = try hash("removed.jpg")
        let requality = PhotoLikeness.distance(removed, try hash("removed-requality.jpg"))
        let cropped = PhotoLikeness.distance(removed, try hash("removed-cropped.jpg"))
        let others = try ["other.jpg", "gps-rotated.jpg", "photo.webp", "text.png"].map { PhotoLikeness.distance(removed, try hash($0)) }
        print("likeness: re-encoded \(requality) bits, cropped 5 % \(cropped) bits, other pictures \(others) bits (same within \(PhotoLikeness.sameWithin))")
        #expect(requality <= PhotoLikeness.sameWithin && cropped <= PhotoLikeness.sameWithin)
        #expect(others.allSatisfy { $0 > PhotoLikeness.sameWithin })
    }

    @Test func photosAreServedLikeStaticFilesAndGoWithTheirPost() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let poster = try member(app, "poster")
        let admin = try member(app, "chief")
        try app.promoteToAdmin("chief")
        try Self.post(poster, "Rainbow", photo: "photo.webp")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        let hash = try #require(try Self.images(poster).first?["data-photo"])
        let browser = app.browser()
        let whole = try browser.get("/photos/\(hash).webp").0
        let etag = try #require(whole.headers["ETag"])
        #expect(try app.get("/photos/\(hash).webp", headers: [("If-None-Match", etag)]).status == 304)
        let first = try app.get("/photos/\(hash).webp", headers: [("Range", "bytes=0-99")])
        #expect(first.status == 206 && first.body == Array(whole.body[0..<100]))
        #expect(first.headers["Content-Range"] == "bytes 0-99/\(whole.body.count)")
        let tail = try app.get("/photos/\(hash).webp", headers: [("Range", "bytes=-10")])
        #expect(tail.status == 206 && tail.body == Array(whole.body.suffix(10)))
        #expect(try app.get("/photos/\(hash).webp", headers: [("Range", "bytes=\(whole.body.count)-")]).status == 416)
        #expect(try browser.get("/photos/\(String(repeating: "0", count: 32)).webp").0.status == 404)
        #expect(try browser.get("/photos/\(hash).svg").0.status == 404)
        #expect(try browser.get("/photos/../\(hash).webp").0.status == 404)
        // A post a moderator removes takes its photo with it.
        try admin.get("/admin")
        try admin.post("/admin/posts/\(postID)/remove", [("reason", "spam")])
        app.clock.advance(PhotosController.recheckAfter + 1)
        #expect(try browser.get("/photos/\(hash).webp").0.status == 404)
    }

    @Test func limitsRefusePhotosWithTheTextKept() throws {
        let app = try AppHarness {
            $0.limits.secondsBetweenPosts = 0
            $0.limits.photos.perDay = 2
        }
        let poster = try member(app, "poster")
        #expect(try Self.post(poster, "One", photo: "photo.webp").0.status == 303)
        #expect(try Self.post(poster, "Two", photo: "other.jpg").0.status == 303)
        let decodes = app.application.photoProcessor.decodes.load(ordering: .relaxed)
        let (answer, page) = try Self.post(poster, "Three", photo: "text.png", alt: "kept")
        #expect(answer.status == 429)
        #expect(app.application.photoProcessor.decodes.load(ordering: .relaxed) == decodes, "refused before it is decoded")
        #expect(page?.text("//p[@id='post-error']")?.contains("as many photos as a day allows") == true)
        #expect(page?.text("//textarea[@name='body']") == "Three")
        // A day later the member may again.
        app.clock.advance(86_400 + 1)
        #expect(try Self.post(poster, "Three", photo: "text.png").0.status == 303)

        let small = try AppHarness {
            $0.limits.secondsBetweenPosts = 0
            $0.limits.photos.bytesPerMember = 10_000
        }
        let other = try member(small, "other")
        let (refused, form) = try Self.post(other, "Too much", photo: "gps-rotated.jpg")
        #expect(refused.status == 413)
        #expect(form?.text("//p[@id='post-error']")?.contains("all the space a member has") == true)
    }

    /// Issue 61 #2: the post's own cheap refusals come before the decode. The same post and photo
    /// sent again is the saved post, a post inside the pause is refused, with no decode either way;
    /// a picture already kept counts towards the day's photos; and the day's decodes, refused
    /// pictures included, are limited (three times the day's photos).
    @Test func cheapRefusalsComeBeforeThePhotoIsDecoded() throws {
        let app = try AppHarness {
            $0.limits.secondsBetweenPosts = 30
            $0.limits.photos.perDay = 2
        }
        let poster = try member(app, "resender")
        try app.inGoodStanding("resender")
        let decoded = { app.application.photoProcessor.decodes.load(ordering: .relaxed) }
        #expect(try Self.post(poster, "Frost on the river", photo: "photo.webp").0.status == 303)
        let once = decoded()
        for _ in 0..<5 {
            let (again, _) = try Self.post(poster, "Frost on the river", photo: "photo.webp")
            #expect(again.status == 303, "the saved post, again")
        }
        #expect(decoded() == once, "sent again: no decode")
        let (tooSoon, form) = try Self.post(poster, "And the bridge", photo: "other.jpg")
        #expect(tooSoon.status == 429)
        #expect(form?.text("//textarea[@name='body']") == "And the bridge")
        #expect(decoded() == once, "inside the pause: no decode")
        // The same picture kept already is a photo of the day all the same.
        app.clock.advance(31)
        #expect(try Self.post(poster, "The same view, later", photo: "photo.webp").0.status == 303)
        app.clock.advance(31)
        let (third, _) = try Self.post(poster, "Third photo", photo: "other.jpg")
        #expect(third.status == 429, "two photos today, one of them a picture kept before")

        // Decodes of pictures that are refused count too: a damaged file sent over and over.
        let tries = try AppHarness { $0.limits.secondsBetweenPosts = 0; $0.limits.photos.perDay = 1 }
        let sender = try member(tries, "trier")
        var statuses: [Int] = []
        for n in 0..<4 {
            try sender.get("/city/seoul")
            statuses.append(try sender.postMultipart("/city/seoul/posts", [("body", "Try \(n)")], files: [Self.upload("truncated.jpg")]).0.status)
        }
        #expect(statuses == [422, 422, 422, 429], "\(statuses)")
    }

    @Test func blocksHideAPhotoWithItsPost() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let poster = try member(app, "poster")
        let blocker = try member(app, "blocker")
        try Self.post(poster, "A sunset", photo: "photo.webp")
        #expect(try Self.images(blocker).count == 1)
        try blocker.get("/users/poster")
        try blocker.post("/users/poster/block", [])
        #expect(try Self.images(blocker).count == 0)
        #expect(try Self.images(app.browser()).count == 1)
    }

    /// A post its author deletes takes its photo's files with it: served no more, and no longer
    /// counted against the author's space.
    @Test func deletingAPostDeletesItsPhoto() throws {
        let app = try AppHarness { $0.limits.secondsBetweenPosts = 0 }
        let poster = try member(app, "poster")
        try Self.post(poster, "Fog bank", photo: "photo.webp")
        let postID = Int64(try app.count("SELECT max(id) FROM posts"))
        let hash = try #require(try Self.images(poster).first?["data-photo"])
        try poster.get("/posts/\(postID)/delete")
        #expect(try poster.post("/posts/\(postID)/delete", []).0.status == 303)
        #expect(try app.count("SELECT count(*) FROM photos") == 0)
        #expect(try app.get("/photos/\(hash).webp").status == 404)
    }
}
