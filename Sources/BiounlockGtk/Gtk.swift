import CGtk

// A thin Swift layer over GTK 4 and libadwaita 1.2, for biounlock-settings: only what the app
// uses. Widgets are owned by GTK (a new widget is floating; the container it is added to takes
// it), so these wrappers hold no reference of their own: a wrapper is a typed handle, valid
// while its widget is in the window. Signals go through `Signals`, whose closure boxes are
// released by GLib when the handler is disconnected or its object finalised.
//
// Everything here runs on the main thread (GTK's); nothing here blocks.

/// A GObject pointer viewed as whichever C type a call wants (GTK declares some types with
/// their structs, others opaque).
public struct GPointer {
    public let raw: UnsafeMutableRawPointer
    public init(_ raw: UnsafeMutableRawPointer) { self.raw = raw }
    public init?(_ raw: UnsafeMutableRawPointer?) { guard let raw else { return nil }; self.raw = raw }
    public init<T>(_ typed: UnsafeMutablePointer<T>) { raw = UnsafeMutableRawPointer(typed) }
    public init(_ opaque: OpaquePointer) { raw = UnsafeMutableRawPointer(opaque) }
    @inline(__always) func typed<T>(_: T.Type = T.self) -> UnsafeMutablePointer<T> { raw.assumingMemoryBound(to: T.self) }
    @inline(__always) func typed() -> OpaquePointer { OpaquePointer(raw) }
    @inline(__always) var opaque: OpaquePointer { OpaquePointer(raw) }
}

/// Any widget.
public class Widget {
    public let g: GPointer
    public init(_ g: GPointer) { self.g = g }
    var widget: UnsafeMutablePointer<GtkWidget> { g.typed() }

    /// The name assistive technologies (and the tests, through AT-SPI) read.
    public func accessibleName(_ name: String) { biounlock_gtk_accessible_label(widget, name) }
    public func accessibleDescription(_ text: String) { biounlock_gtk_accessible_description(widget, text) }
    public var visible: Bool {
        get { gtk_widget_get_visible(widget) != 0 }
        set { gtk_widget_set_visible(widget, newValue ? 1 : 0) }
    }
    public var sensitive: Bool {
        get { gtk_widget_get_sensitive(widget) != 0 }
        set { gtk_widget_set_sensitive(widget, newValue ? 1 : 0) }
    }
    public func addCSSClass(_ name: String) { gtk_widget_add_css_class(widget, name) }
    /// Centred vertically in its row (a switch, a button).
    public func centreVertically() { gtk_widget_set_valign(widget, GTK_ALIGN_CENTER) }
    public func tooltip(_ text: String) { gtk_widget_set_tooltip_text(widget, text) }
    public func grabFocus() { _ = gtk_widget_grab_focus(widget) }
}

public final class Label: Widget {
    public init(_ text: String) { super.init(GPointer(gtk_label_new(text))) }
    public func set(_ text: String) { gtk_label_set_text(g.typed(), text) }
    public func wrap() { gtk_label_set_wrap(g.typed(), 1); gtk_label_set_xalign(g.typed(), 0) }
    /// At most `n` characters wide when the label asks for its natural width (it still fills the
    /// width it is given): a wrapped label whose text changes then never widens its window.
    public func maxWidthChars(_ n: Int32) { gtk_label_set_max_width_chars(g.typed(), n) }
}

public final class Button: Widget {
    public init(label: String) { super.init(GPointer(gtk_button_new_with_label(label))) }
    public init(icon: String) { super.init(GPointer(gtk_button_new_from_icon_name(icon))) }
    public func onClicked(_ body: @escaping () -> Void) { Signals.connect(g, "clicked", body) }
}

/// GtkToggleButton; in a group (`join`), one of a set of choices, like radio buttons (AT-SPI: a
/// toggle button with its "click" action, which GTK 4.8 gives check buttons not).
public final class ToggleButton: Widget {
    public init(label: String) { super.init(GPointer(gtk_toggle_button_new_with_label(label))) }
    public var isActive: Bool {
        get { gtk_toggle_button_get_active(g.typed()) != 0 }
        set { gtk_toggle_button_set_active(g.typed(), newValue ? 1 : 0) }
    }
    /// Makes this button one of `other`'s group: one of them is active at a time.
    public func join(_ other: ToggleButton) { gtk_toggle_button_set_group(g.typed(), other.g.typed()) }
}

public final class Image: Widget {
    public init(icon: String) { super.init(GPointer(gtk_image_new_from_icon_name(icon))) }
}

/// GtkProgressBar (AT-SPI: a progress bar with its value).
public final class ProgressBar: Widget {
    public init() { super.init(GPointer(gtk_progress_bar_new())) }
    public var fraction: Double {
        get { gtk_progress_bar_get_fraction(g.opaque) }
        set { gtk_progress_bar_set_fraction(g.opaque, newValue) }
    }
}

public final class Spinner: Widget {
    public init() { super.init(GPointer(gtk_spinner_new())) }
    public var spinning: Bool {
        get { gtk_spinner_get_spinning(g.opaque) != 0 }
        set { gtk_spinner_set_spinning(g.opaque, newValue ? 1 : 0) }
    }
}

/// GtkSwitch with its "state" delayed: the user moves the switch (active), the app decides
/// the state. `onRequest(on)` is called when the user asks for `on`; the app answers later
/// with `settle(_:)`. Changes the app makes itself call nothing.
public final class Switch: Widget {
    private var settling = false
    public init() { super.init(GPointer(gtk_switch_new())) }
    public var isOn: Bool { gtk_switch_get_state(g.opaque) != 0 }

    /// The switch stays where the user put it (not yet its state) until `settle`.
    public func onRequest(_ body: @escaping (Bool) -> Void) {
        Signals.connectBoolHandled(g, "state-set") { [weak self] on in
            guard let self, !self.settling else { return false }   // ours: GTK applies it
            body(on)
            return true   // handled: the state waits for settle()
        }
    }

    /// Sets both the position and the state, without calling onRequest's body.
    public func settle(_ on: Bool) {
        settling = true
        gtk_switch_set_active(g.opaque, on ? 1 : 0)
        gtk_switch_set_state(g.opaque, on ? 1 : 0)
        settling = false
    }
}

public final class Box: Widget {
    public init(vertical: Bool, spacing: Int32 = 0) {
        super.init(GPointer(gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing)))
    }
    public func append(_ child: Widget) { gtk_box_append(g.typed(), child.widget) }
}

/// GtkPasswordEntry: GTK keeps its text in non-pageable memory and clears it when freed; the
/// app reads it once (`withText`) and clears it at once.
public final class PasswordEntry: Widget {
    public init(placeholder: String) {
        super.init(GPointer(gtk_password_entry_new()))
        // Kept alive for the rest of the process (a few hundred bytes per dialog): GTK 4.8's
        // password entry leaves its caps-lock handler on the keyboard after the entry is freed,
        // and the next caps-lock notification would reach freed memory (seen in
        // Tests/EndToEnd/settings-app.sh: "invalid unclassed pointer in cast to 'GtkPasswordEntry'").
        _ = g_object_ref_sink(g.raw)
        gtk_password_entry_set_show_peek_icon(g.opaque, 1)
        biounlock_gtk_set_string(g.raw, "placeholder-text", placeholder)
        // Enter in the field answers the dialog's default response.
        biounlock_gtk_set_bool(g.raw, "activates-default", 1)
    }
    /// The text's bytes (UTF-8, no NUL), for the time of `body`.
    public func withText<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let text = gtk_editable_get_text(g.opaque) else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        var n = 0
        while text[n] != 0 { n += 1 }
        return body(UnsafeRawBufferPointer(start: UnsafeRawPointer(text), count: n))
    }
    public func clear() { gtk_editable_set_text(g.opaque, "") }
}

// MARK: libadwaita

public final class PreferencesPage: Widget {
    public init() { super.init(GPointer(adw_preferences_page_new())) }
    public func add(_ group: PreferencesGroup) { adw_preferences_page_add(g.typed(), group.g.typed()) }
}

public final class PreferencesGroup: Widget {
    public init(title: String, description: String? = nil) {
        super.init(GPointer(adw_preferences_group_new()))
        adw_preferences_group_set_title(g.typed(), title)
        if let description { adw_preferences_group_set_description(g.typed(), description) }
    }
    public func add(_ child: Widget) { adw_preferences_group_add(g.typed(), child.widget) }
    public func remove(_ child: Widget) { adw_preferences_group_remove(g.typed(), child.widget) }
    /// Puts `child`, one of the group's rows, after all the others. libadwaita 1.2 has no way to
    /// reorder, so it is removed and added again; the group holds the only reference to a row
    /// (the floating one is sunk when it is added), so a reference of its own keeps it alive --
    /// and its children and expanded state with it -- in between.
    public func moveToEnd(_ child: Widget) {
        _ = g_object_ref(child.g.raw)
        adw_preferences_group_remove(g.typed(), child.widget)
        adw_preferences_group_add(g.typed(), child.widget)
        g_object_unref(child.g.raw)
    }
}

/// AdwActionRow: a title, a subtitle, widgets before and after (libadwaita 1.2 has no
/// AdwSwitchRow: a GtkSwitch as the suffix and the row's activatable widget stands in for it).
public final class ActionRow: Widget {
    public init(title: String, subtitle: String = "") {
        super.init(GPointer(adw_action_row_new()))
        self.title = title
        self.subtitle = subtitle
    }
    public var title: String {
        get { adw_preferences_row_get_title(g.typed()).map { String(cString: $0) } ?? "" }
        set { adw_preferences_row_set_title(g.typed(), newValue) }
    }
    public var subtitle: String {
        get { adw_action_row_get_subtitle(g.typed()).map { String(cString: $0) } ?? "" }
        set { adw_action_row_set_subtitle(g.typed(), newValue) }
    }
    public func addPrefix(_ w: Widget) { adw_action_row_add_prefix(g.typed(), w.widget) }
    public func addSuffix(_ w: Widget) { adw_action_row_add_suffix(g.typed(), w.widget) }
    /// Activating the row (a click anywhere on it, Enter) activates `w`.
    public func activates(_ w: Widget) { adw_action_row_set_activatable_widget(g.typed(), w.widget) }
    /// Title and subtitle are text a person reads: never markup.
    public func plainText() { adw_preferences_row_set_use_markup(g.typed(), 0) }
}

/// AdwExpanderRow: a row that opens (its arrow, a click, Enter or Space) to show the rows added
/// to it.
public final class ExpanderRow: Widget {
    public init(title: String, subtitle: String = "") {
        super.init(GPointer(adw_expander_row_new()))
        adw_preferences_row_set_title(g.typed(), title)
        adw_expander_row_set_subtitle(g.typed(), subtitle)
    }
    public func addRow(_ w: Widget) { adw_expander_row_add_row(g.typed(), w.widget) }
    /// Title and subtitle are text a person reads: never markup.
    public func plainText() { adw_preferences_row_set_use_markup(g.typed(), 0) }
}

public final class HeaderBar: Widget {
    public init() { super.init(GPointer(adw_header_bar_new())) }
}

public final class ToastOverlay: Widget {
    public init() { super.init(GPointer(adw_toast_overlay_new())) }
    public func setChild(_ w: Widget) { adw_toast_overlay_set_child(g.typed(), w.widget) }
    /// A short message at the bottom of the window (the overlay takes the toast).
    public func toast(_ text: String, seconds: UInt32 = 5) {
        let t = adw_toast_new(text)
        adw_toast_set_timeout(t, seconds)
        adw_toast_overlay_add_toast(g.typed(), t)
    }
}

public final class ApplicationWindow: Widget {
    public init(application: Application) { super.init(GPointer(adw_application_window_new(application.gtkApplication))) }
    public func setContent(_ w: Widget) { adw_application_window_set_content(g.typed(), w.widget) }
    public func setTitle(_ text: String) { gtk_window_set_title(g.typed(), text) }
    public func setDefaultSize(_ width: Int32, _ height: Int32) { gtk_window_set_default_size(g.typed(), width, height) }
    public func present() { gtk_window_present(g.typed()) }
}

/// AdwMessageDialog: a heading, a text, an optional child (the password fields), and buttons
/// (responses); the dialog closes itself after a response.
public final class MessageDialog: Widget {
    public init(parent: ApplicationWindow, heading: String, body: String) {
        super.init(GPointer(adw_message_dialog_new(parent.g.typed(), heading, body)))
        gtk_window_set_modal(g.typed(), 1)
        gtk_window_set_title(g.typed(), heading)
    }
    /// A button; `suggested` colours it as the dialog's main action (and makes it the default).
    public func addResponse(_ id: String, _ label: String, suggested: Bool = false) {
        adw_message_dialog_add_response(g.typed(), id, label)
        if suggested {
            adw_message_dialog_set_response_appearance(g.typed(), id, ADW_RESPONSE_SUGGESTED)
            adw_message_dialog_set_default_response(g.typed(), id)
        }
    }
    /// The response Escape (and closing the window) gives.
    public func setCloseResponse(_ id: String) { adw_message_dialog_set_close_response(g.typed(), id) }
    public func setExtraChild(_ w: Widget) { adw_message_dialog_set_extra_child(g.typed(), w.widget) }
    public func onResponse(_ body: @escaping (String) -> Void) { Signals.connectString(g, "response", body) }
    public func setResponseLabel(_ id: String, _ label: String) { adw_message_dialog_set_response_label(g.typed(), id, label) }
    /// Closes it from the program (no response is emitted).
    public func close() { gtk_window_destroy(g.typed()) }
    public func present() { gtk_window_present(g.typed()) }
}

/// GtkDrawingArea drawn with cairo, with a pointer drag (GtkGestureDrag) and keys (a focusable
/// widget): what the pattern grid is made of.
public final class DrawingArea: Widget {
    /// `focusable`: takes the keyboard focus (the pattern grid); a picture does not.
    public init(width: Int32, height: Int32, focusable: Bool = true) {
        super.init(GPointer(gtk_drawing_area_new()))
        gtk_drawing_area_set_content_width(g.typed(), width)
        gtk_drawing_area_set_content_height(g.typed(), height)
        gtk_widget_set_focusable(widget, focusable ? 1 : 0)
        gtk_widget_set_can_focus(widget, focusable ? 1 : 0)
        if !focusable { gtk_widget_set_halign(widget, GTK_ALIGN_CENTER) }
    }
    /// Draws with cairo: (cairo context, width, height).
    public func onDraw(_ body: @escaping (Cairo, Double, Double) -> Void) {
        let data = Unmanaged.passRetained(Signals.Box(body) as AnyObject).toOpaque()
        let draw: @convention(c) (UnsafeMutablePointer<GtkDrawingArea>?, OpaquePointer?, Int32, Int32, gpointer?) -> Void = { _, cr, w, h, data in
            guard let cr, let data, let box = Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? Signals.Box<(Cairo, Double, Double) -> Void> else { return }
            box.body(Cairo(cr), Double(w), Double(h))
        }
        let destroy: GDestroyNotify = { data in
            guard let data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
        gtk_drawing_area_set_draw_func(g.typed(), draw, data, destroy)
    }
    public func redraw() { gtk_widget_queue_draw(widget) }
    /// A pointer (or touch) drag: begin at (x, y), then each move at (x, y) in the widget, then end.
    public func onDrag(begin: @escaping (Double, Double) -> Void, update: @escaping (Double, Double) -> Void, end: @escaping () -> Void) {
        guard let gesture = gtk_gesture_drag_new() else { return }
        var start = (0.0, 0.0)
        let gg = GPointer(gesture)
        // Claimed at once: AdwMessageDialog puts its content in a GtkWindowHandle, whose own
        // drag would otherwise take the pointer and move the window instead of drawing.
        Signals.connectPoint(gg, "drag-begin") { x, y in
            _ = gtk_gesture_set_state(gg.typed(), GTK_EVENT_SEQUENCE_CLAIMED)
            start = (x, y); begin(x, y)
        }
        Signals.connectPoint(gg, "drag-update") { dx, dy in update(start.0 + dx, start.1 + dy) }
        Signals.connectPoint(gg, "drag-end") { _, _ in end() }
        gtk_widget_add_controller(widget, gg.typed())
    }
    /// A key pressed while the widget has the focus: its Unicode character (0 if none); true
    /// when handled.
    public func onKey(_ body: @escaping (UInt32) -> Bool) {
        guard let controller = gtk_event_controller_key_new() else { return }
        let data = Unmanaged.passRetained(Signals.Box(body) as AnyObject).toOpaque()
        let trampoline: @convention(c) (gpointer?, guint, guint, GdkModifierType, gpointer?) -> gboolean = { _, keyval, _, _, data in
            guard let data, let box = Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? Signals.Box<(UInt32) -> Bool> else { return 0 }
            return box.body(gdk_keyval_to_unicode(keyval)) ? 1 : 0
        }
        let cg = GPointer(controller)
        _ = biounlock_gtk_connect(cg.raw, "key-pressed", unsafeBitCast(trampoline, to: GCallback.self), data, Signals.release)
        gtk_widget_add_controller(widget, cg.typed())
    }
}

/// The cairo context a draw function gets (only what the grid uses).
public struct Cairo {
    let cr: OpaquePointer
    init(_ cr: OpaquePointer) { self.cr = cr }
    public func colour(_ r: Double, _ g: Double, _ b: Double, _ a: Double = 1) { cairo_set_source_rgba(cr, r, g, b, a) }
    public func circle(_ x: Double, _ y: Double, _ radius: Double) { cairo_new_sub_path(cr); cairo_arc(cr, x, y, radius, 0, 2 * Double.pi) }
    /// An arc of the circle at (x, y), clockwise from angle `from` to `to` (radians, 0 to the right).
    public func arc(_ x: Double, _ y: Double, _ radius: Double, from: Double, to: Double) { cairo_new_sub_path(cr); cairo_arc(cr, x, y, radius, from, to) }
    public func move(_ x: Double, _ y: Double) { cairo_move_to(cr, x, y) }
    public func line(_ x: Double, _ y: Double) { cairo_line_to(cr, x, y) }
    public func lineWidth(_ w: Double) { cairo_set_line_width(cr, w); cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND); cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND) }
    public func fill() { cairo_fill(cr) }
    /// Moves what is drawn next by (dx, dy).
    public func translate(_ dx: Double, _ dy: Double) { cairo_translate(cr, dx, dy) }
    public func stroke() { cairo_stroke(cr) }
}

/// AdwApplication: one instance per session (GApplication's uniqueness on the session bus).
public final class Application {
    let g: GPointer
    var gtkApplication: UnsafeMutablePointer<GtkApplication> { g.typed() }
    public init(id: String) {
        g = GPointer(adw_application_new(id, G_APPLICATION_DEFAULT_FLAGS))
    }
    /// The first (or next) activation: show the window.
    public func onActivate(_ body: @escaping () -> Void) { Signals.connect(g, "activate", body) }
    /// Runs the main loop until the last window closes; the exit status.
    public func run() -> Int32 { g_application_run(g.typed(), 0, nil) }
    public var activeWindow: Bool { gtk_application_get_active_window(gtkApplication) != nil }
}

// MARK: signals

/// Swift closures as GObject signal handlers. Each handler's closure lives in a box that GLib
/// owns (the destroy notify releases it): no handler outlives its closure or the reverse.
public enum Signals {
    final class Box<F> {
        let body: F
        init(_ body: F) { self.body = body }
    }

    static let release: GClosureNotify = { data, _ in
        guard let data else { return }
        Unmanaged<AnyObject>.fromOpaque(data).release()
    }

    /// A signal whose handler takes only the instance (clicked, activate).
    @discardableResult
    public static func connect(_ instance: GPointer, _ signal: String, _ body: @escaping () -> Void) -> UInt {
        let data = Unmanaged.passRetained(Box(body) as AnyObject).toOpaque()
        let trampoline: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            guard let data, let box = Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? Box<() -> Void> else { return }
            box.body()
        }
        return UInt(biounlock_gtk_connect(instance.raw, signal, unsafeBitCast(trampoline, to: GCallback.self), data, release))
    }

    /// A signal with a string argument (AdwMessageDialog::response).
    @discardableResult
    public static func connectString(_ instance: GPointer, _ signal: String, _ body: @escaping (String) -> Void) -> UInt {
        let data = Unmanaged.passRetained(Box(body) as AnyObject).toOpaque()
        let trampoline: @convention(c) (gpointer?, UnsafePointer<CChar>?, gpointer?) -> Void = { _, text, data in
            guard let data, let box = Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? Box<(String) -> Void> else { return }
            box.body(text.map { String(cString: $0) } ?? "")
        }
        return UInt(biounlock_gtk_connect(instance.raw, signal, unsafeBitCast(trampoline, to: GCallback.self), data, release))
    }

    /// A signal with a gboolean argument whose handler returns a gboolean (GtkSwitch::state-set).
    @discardableResult
    public static func connectBoolHandled(_ instance: GPointer, _ signal: String, _ body: @escaping (Bool) -> Bool) -> UInt {
        let data = Unmanaged.passRetained(Box(body) as AnyObject).toOpaque()
        let trampoline: @convention(c) (gpointer?, gboolean, gpointer?) -> gboolean = { _, value, data in
            guard let data, let box = Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? Box<(Bool) -> Bool> else { return 0 }
            return box.body(value != 0) ? 1 : 0
        }
        return UInt(biounlock_gtk_connect(instance.raw, signal, unsafeBitCast(trampoline, to: GCallback.self), data, release))
    }

    /// A signal with two gdouble arguments (GtkGestureDrag::drag-begin/-update/-end).
    @discardableResult
    public static func connectPoint(_ instance: GPointer, _ signal: String, _ body: @escaping (Double, Double) -> Void) -> UInt {
        let data = Unmanaged.passRetained(Box(body) as AnyObject).toOpaque()
        let trampoline: @convention(c) (gpointer?, gdouble, gdouble, gpointer?) -> Void = { _, x, y, data in
            guard let data, let box = Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? Box<(Double, Double) -> Void> else { return }
            box.body(x, y)
        }
        return UInt(biounlock_gtk_connect(instance.raw, signal, unsafeBitCast(trampoline, to: GCallback.self), data, release))
    }
}
