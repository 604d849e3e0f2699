import HTTPServer

extension Request {
    /// Whether the body is declared `multipart/form-data`.
    public var isMultipartForm: Bool {
        headers["Content-Type"].flatMap(MultipartForm.boundary(ofContentType:)) != nil
    }

    /// The body as a multipart form: its text fields as a form, and its files; 415 for another
    /// content type, 400 when malformed, 413 past `limits`.
    public func multipartBody(limits: MultipartForm.Limits = MultipartForm.Limits()) throws -> (fields: URLEncodedForm, files: [MultipartForm.File]) {
        guard let boundary = headers["Content-Type"].flatMap(MultipartForm.boundary(ofContentType:)) else {
            throw HTTPError(.unsupportedMediaType, message: "Expected multipart/form-data")
        }
        do {
            let form = try MultipartForm(body: body, boundary: boundary, limits: limits)
            var fields = URLEncodedForm()
            for field in form.textFields { fields.append(field.name, field.value) }
            return (fields, form.files)
        } catch MultipartForm.Failure.malformed(let why) {
            throw HTTPError(.badRequest, message: why)
        } catch MultipartForm.Failure.tooLarge(let why) {
            throw HTTPError(.contentTooLarge, message: why)
        }
    }
}
