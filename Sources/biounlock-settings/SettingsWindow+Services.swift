import BiounlockCore
import BiounlockServiceProtocol
import BiounlockGtk

/// "Where to use it" (issue 31: per service -- sudo, login and lock screen, everything else --
/// under an expander): a switch for each of the library's service groups (ServiceGroup, made from
/// the table of known services) and one for everything else, which is the user's toggle: the
/// services of no group, and of a group without a setting of its own, follow it. Each switch is
/// one call to biounlockd ("@sudo", "@login", ""), one change with one audit row; turning one on
/// goes through the same check, refusal and proof as the main switch.
extension SettingsWindow {
    func addWhere() {
        whereRow.plainText()
        let rows: [(ManagerAPI.Scope, String, String)] = [
            // TRANSLATORS: the switches under "Where to Use It" and what each covers; "sudo" is the
            // command's name (keep it unless your language's desktops write it otherwise).
            (.group(.sudo), L("sudo"), SettingsWindow.whereSubtitle(.sudo)),
            (.group(.login), L("Login and Lock Screen"), SettingsWindow.whereSubtitle(.login)),
            (.toggle, L("Everything Else"), L("Any other program that asks for your password")),
        ]
        for (scope, title, subtitle) in rows {
            let row = ActionRow(title: title, subtitle: subtitle)
            row.plainText()
            let control = Switch()
            control.centreVertically()
            // The switch's accessible name is the row's title (the row labels its activatable widget).
            control.sensitive = false
            row.addSuffix(control)
            row.activates(control)
            control.onRequest { [weak self, weak control] on in
                guard let self, let control else { return }
                self.request(on, scope: scope, control: control)
            }
            whereRow.addRow(row)
            whereSwitches.append((scope, row, control))
        }
        whereRow.visible = false
        unlockGroup.add(whereRow)
    }

    /// Each switch as the service says: a group on, off, or on for some of its services only
    /// (shown on, and said: one move turns it off for all of them, without a password).
    func showWhere(_ s: AccountStatus) {
        whereRow.visible = true
        for (scope, row, control) in whereSwitches {
            control.sensitive = true
            switch scope {
            case .group(let group):
                let state = s.state(of: group)
                control.settle(state != .off)
                row.subtitle = state == .mixed ? L("On for some of these only") : SettingsWindow.whereSubtitle(group)
            default:
                control.settle(s.enabled)
            }
        }
    }

    static func whereSubtitle(_ group: ServiceGroup) -> String {
        switch group {
        case .sudo: return L("Running commands as root: sudo, su, pkexec and the like")
        case .login: return L("Logging in, and unlocking the locked screen")
        }
    }
}
