/**
 * What voice sessions report of their approvals: asked and decided in the
 * feed, with the same entries and notifications as a run's (activity/runs.ts), and a
 * decision made on the call itself (the socket's `approval` frame, the user's
 * spoken answer) in the audit log too, as a REST answer is by the request
 * auditor. Only ids go in.
 */
import type { ActivityRecorder } from '../activity/record.js';
import { reportApprovalDecided, reportApprovalRequested } from '../activity/runs.js';
import type { VoiceApprovalObserver, VoiceApprovalSession } from './session-tools.js';

const detailsOf = (session: VoiceApprovalSession) => ({ voice_session_id: session.sessionId });

export const voiceApprovalObserver = (recorder: ActivityRecorder): VoiceApprovalObserver => ({
  requested: (org, session, approvalId, tool) => reportApprovalRequested(recorder, org, session.userId, detailsOf(session), approvalId, tool),
  decided: async (org, session, approvalId, approved, decidedBy, via) => {
    const decision = approved ? 'approved' : 'denied';
    await reportApprovalDecided(recorder, org, { ...detailsOf(session), via }, approvalId, decision, decidedBy);
    if (via !== 'socket' && via !== 'speech') return;
    await recorder.audit(org, {
      actor: await recorder.userActor(decidedBy),
      action: 'decide',
      resource: { kind: 'approval', id: approvalId },
      details: { ...detailsOf(session), decision, via },
    });
  },
});
