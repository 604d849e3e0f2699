import Foundation

/// "Are you sure?" before a destructive action, without JavaScript: the action's own form,
/// its fields carried along, posted only from here.
struct ConfirmPage {
    struct Field {
        var name: String
        var value: String
    }
    struct Detail {
        var text: String
    }
    /// A field the person fills in again (a password, a file): never written back into a page.
    struct Input {
        var name: String
        var label: String
    }

    var layout: LayoutView
    var heading: String
    /// Said first, as an alert: values a link filled in rather than the site's own form.
    var warning: String?
    var quote: String?
    var details: [Detail] = []
    var question: String
    var action: String
    var fields: [Field] = []
    var retype: [Input] = []
    var files: [Input] = []
    /// Files travel only in a multipart form.
    var enctype: String { files.isEmpty ? "application/x-www-form-urlencoded" : "multipart/form-data" }
    var button: String
    /// Red for what cannot be undone.
    var buttonClass = "danger"
    var cancelHref: String
}

/// One `<option>` of a `<select>`.
struct SelectOption {
    var value: String
    var label: String
    var selected = false
}
