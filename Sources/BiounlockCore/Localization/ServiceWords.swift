/// What the user is doing, in words, for the PAM services biounlock knows (issue 33, item 3):
/// prompts, messages and `biounlock log` say "for unlocking the screen", not "for i3lock" or "for
/// kde-fingerprint". One table, here; an unknown service keeps its name.
///
/// The words fill the `{service}` slot of the existing texts ("PIN or password for {service}: "),
/// so they are phrases that read after "for" (and after each language's word in that slot:
/// "für", "pour", "para", "の", "（…）"), not infinitives: "for running a command as root".
/// The service's name is what the caller passed to pam_start (PAM_SERVICE): a caller that names
/// itself after a known service is described as that service -- the same name the admin sees in
/// its /etc/pam.d file. Matching is byte for byte (no case folding).
/// The custom `reason=` text (its `%s`) and `biounlock status` keep the name: they are the
/// admin's, about the service's configuration.
public enum ServiceWords {
    public enum Purpose: Sendable, Equatable {
        case runAsRoot, logIn, unlockScreen, authoriseAction, changeAccount
    }

    /// The known services (lower-case names as their packages install them in /etc/pam.d), by
    /// what the user does through them: the one table, which the settings app's groups
    /// (ServiceGroup) are made from too.
    public static let known: [(purpose: Purpose, services: [String])] = [
        (.runAsRoot, ["sudo", "sudo-i", "su", "su-l", "doas", "run0", "pkexec"]),
        (.logIn, ["login", "sshd", "remote", "gdm-password", "gdm-fingerprint", "gdm-smartcard", "gdm-autologin",
                  "lightdm", "lightdm-autologin", "sddm", "sddm-autologin", "xdm", "greetd", "ly", "cockpit"]),
        (.unlockScreen, ["i3lock", "swaylock", "hyprlock", "gtklock", "waylock", "xscreensaver", "xsecurelock",
                         "light-locker", "vlock", "physlock", "kde", "kde-fingerprint", "kde-smartcard",
                         "gnome-screensaver", "mate-screensaver", "cinnamon-screensaver", "xfce4-screensaver",
                         // Debian's xsecurelock is built with --with-pam-service-name=common-auth (its
                         // authproto_pam calls pam_start("common-auth") unless XSECURELOCK_PAM_SERVICE
                         // says otherwise); no other caller we know of names itself so.
                         "common-auth"]),
        (.authoriseAction, ["polkit-1"]),
        (.changeAccount, ["chsh", "chfn"]),
    ]

    /// What the user does through `service`, when it is a known one.
    public static func purpose(of service: String) -> Purpose? {
        for entry in known where entry.services.contains(service) { return entry.purpose }
        return nil
    }

    /// The words for a known service, in the user's language; the name itself for any other.
    public static func words(for service: String) -> String {
        switch purpose(of: service) {
        // TRANSLATORS: what the user is doing, put in place of a PAM service's name in prompts and
        // messages ("PIN or password for {service}: "): a phrase that reads where {service} stands
        // in your translations of those texts (after "for"), e.g. "für das Ausführen eines Befehls als root".
        case .runAsRoot?: return L("running a command as root")
        // TRANSLATORS: what the user is doing (see "running a command as root"): logging in to the computer.
        case .logIn?: return L("logging in")
        // TRANSLATORS: what the user is doing (see "running a command as root"): unlocking a locked screen or terminal.
        case .unlockScreen?: return L("unlocking the screen")
        // TRANSLATORS: what the user is doing (see "running a command as root"): a system dialog (polkit) asks to allow an action.
        case .authoriseAction?: return L("authorising an action")
        // TRANSLATORS: what the user is doing (see "running a command as root"): chsh, chfn.
        case .changeAccount?: return L("changing account details")
        case nil: return service
        }
    }

    /// For `biounlock log`, which an admin filters by service name: the words, then the name
    /// ("unlocking the screen (i3lock)"); the name alone for an unknown service.
    public static func wordsAndName(for service: String) -> String {
        guard purpose(of: service) != nil else { return service }
        // TRANSLATORS: `biounlock log`: {words} is what the user was doing ("running a command as root"), {service} the PAM service's name.
        return L("{words} ({service})", ["words": words(for: service), "service": service])
    }
}
