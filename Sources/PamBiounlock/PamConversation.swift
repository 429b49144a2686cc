import BiounlockCore
import BiounlockSystem
import CPAM

/// The PAM conversation, as the policy chain sees it.
///
/// Security choices: an answer is copied straight from the conversation's C buffer into a
/// zeroing `Secret` (never a String); the C buffer is wiped with explicit_bzero and freed on
/// every path. A failed conversation, a NULL answer, or an answer over 512 bytes is never
/// treated as a passcode.
final class PamConversation: Conversation {
    let pamh: OpaquePointer

    init(_ pamh: OpaquePointer) { self.pamh = pamh }

    func info(_ text: String) {
        _ = biounlock_pam_prompt(pamh, PAM_TEXT_INFO, nil, text)
    }

    func error(_ text: String) {
        _ = biounlock_pam_prompt(pamh, PAM_ERROR_MSG, nil, text)
    }

    /// PAM_AUTHTOK for the next module's try_first_pass. libpam copies the item and wipes its
    /// copy at pam_end; ours stays in the zeroing Secret.
    func handOverPassword(_ secret: Secret) -> Bool {
        secret.withCChars { chars, _ in pam_set_item(pamh, PAM_AUTHTOK, chars) } == PAM_SUCCESS
    }

    func promptSecret(_ prompt: String) -> ConversationReply {
        var response: UnsafeMutablePointer<CChar>?
        let rc = biounlock_pam_prompt(pamh, PAM_PROMPT_ECHO_OFF, &response, prompt)
        guard let response else { return .failed }
        defer { biounlock_pam_drop_response(response) }
        guard rc == PAM_SUCCESS else { return .failed }
        let length = CString.length(response, maximumLength: Secret.maximumLength + 1)
        if length == 0 { return .empty }
        guard let secret = Secret(copying: response, count: length) else { return .tooLong }
        return .answer(secret)
    }
}
