#include "llm/paid_call_ledger.h"

#include "store/run_store.h"

#include <QThread>

namespace autocomp {

PaidCallLedger::PaidCallLedger(Owner *owner, LlmClient *client, RunStore *store, const LlmConfig &config,
                               QObject *parent)
    : QObject(parent)
    , m_owner(owner)
    , m_client(client)
    , m_store(store)
    , m_config(config)
    , m_prices(PriceTable::loadDefault())
{}

LlmCall PaidCallLedger::answered(LlmCall call, const LlmResponse &response)
{
    call.response = response.text;
    call.reasoning = response.reasoning;
    call.tokensIn = response.tokensIn;
    call.tokensOut = response.tokensOut;
    call.latencyMs = response.latencyMs;
    call.usd = response.fromCache ? 0.0 : response.usd;
    call.retries = response.retries;
    call.attempts = response.attempts.join(QLatin1Char('\n'));
    call.status = response.fromCache ? QStringLiteral("cached")
        : response.ok                ? QStringLiteral("ok")
                                     : QStringLiteral("error");
    call.error = response.error;
    return call;
}

qint64 PaidCallLedger::record(const LlmCall &base, const LlmResponse &response, qint64 inFlightId, bool sent)
{
    LlmCall call = answered(base, response);
    call.id = inFlightId;
    const qint64 id = inFlightId ? (m_store->completeLlmCall(call) ? inFlightId : 0) : m_store->addLlmCall(call);
    if (!id) {
        m_owner->storeFailed(QStringLiteral("recording an LLM answer"));
        return 0;
    }
    if (!response.fromCache) {
        response.ok ? ++m_okCalls : ++m_failedCalls;
        if (!response.ok)
            m_lastError = response.error;
    }
    if (sent && !response.fromCache)
        m_owner->paidFor(response);
    return id;
}

void PaidCallLedger::answerLater(const LlmCall &base, const LlmResponse &response, const Answer &answer)
{
    ++m_answersDue;
    QMetaObject::invokeMethod(
        this,
        [this, base, response, answer] {
            --m_answersDue;
            if (!m_owner->takesAnswers())
                return;
            m_owner->inBatch([&] {
                const qint64 id = record(base, response, 0, false);
                if (id)
                    answer(response, id);
            });
        },
        Qt::QueuedConnection);
}

void PaidCallLedger::send(const QString &phase, qint64 candidateId, const LlmRequest &request, const Answer &answer)
{
    Q_ASSERT_X(QThread::currentThread() == thread(), "PaidCallLedger::send", "called from another thread");
    const qint64 runId = m_owner->ledgerRun().id;
    const QString hash = request.hash();
    LlmCall base;
    base.runId = runId;
    base.candidateId = candidateId;
    base.phase = phase;
    base.requestHash = hash;
    base.provider = request.spec.provider;
    base.model = request.spec.model;
    base.prompt = request.prompt;

    // A prompt past the limit (e.g. built around a runaway plan) is never sent.
    const qint64 promptBytes = request.prompt.toUtf8().size() + request.system.toUtf8().size();
    if (promptBytes > m_config.maxPromptBytes) {
        LlmResponse refused;
        refused.error = QStringLiteral("prompt of %1 bytes exceeds llm.max_prompt_bytes (%2); not sent")
                            .arg(promptBytes)
                            .arg(m_config.maxPromptBytes);
        m_owner->log(QStringLiteral("%1 request not sent: %2").arg(phase, refused.error));
        answerLater(base, refused, answer);
        return;
    }
    // A response already paid for (same provider, model, prompt, parameters and sample) is reused: from this
    // run (resume), or from any run when the configuration asks for it.
    if (auto cached = m_store->cachedResponse(hash, m_config.reuseAcrossRuns ? 0 : runId)) {
        LlmResponse response;
        response.ok = true;
        response.fromCache = true;
        response.text = cached->response;
        response.reasoning = cached->reasoning;
        response.tokensIn = cached->tokensIn;
        response.tokensOut = cached->tokensOut;
        answerLater(base, response, answer);
        return;
    }
    // An identical request already in flight is not sent again: its answer serves both.
    if (m_waitingOnHash.contains(hash)) {
        m_waitingOnHash[hash] << [this, base, answer](const LlmResponse &response) {
            LlmResponse shared = response;
            shared.fromCache = response.ok;
            const qint64 id = record(base, shared, 0, false);
            if (id)
                answer(shared, id);
        };
        return;
    }
    // Recorded before it is sent: a kill while it is in flight leaves a trace (model, prompt hash, time and
    // the likely cost), shown as unconfirmed.
    LlmCall inFlight = base;
    inFlight.status = QStringLiteral("in_flight");
    inFlight.usd = estimatedCost(request.spec, request.system + request.prompt);
    inFlight.tokensIn = (request.system.size() + request.prompt.size()) / 4;
    const qint64 callId = m_store->addLlmCall(inFlight);
    if (!callId) {
        m_owner->storeFailed(QStringLiteral("recording an LLM request before sending it"));
        return;
    }
    m_waitingOnHash.insert(hash, {});
    // Inside a transaction the request leaves only once it is committed: nothing is paid for unrecorded.
    if (m_store->inBatch())
        m_held << [this, request, base, answer, callId] { launch(request, base, answer, callId); };
    else
        launch(request, base, answer, callId);
}

void PaidCallLedger::launch(const LlmRequest &request, const LlmCall &base, const Answer &answer, qint64 callId)
{
    LlmReply *reply = m_client->send(request);
    m_replies << reply;
    connect(reply, &LlmReply::finished, this,
            [this, reply, base, answer, callId] { arrived(reply, base, answer, callId); });
}

void PaidCallLedger::arrived(LlmReply *reply, const LlmCall &base, const Answer &answer, qint64 callId)
{
    reply->deleteLater();
    m_replies.removeAll(reply);
    const auto followers = m_waitingOnHash.take(base.requestHash);
    // Cut off by a stop or a store failure: not an answer. The call stays unconfirmed, its work not done.
    if (!m_owner->takesAnswers())
        return;
    LlmResponse response = reply->response();
    if (response.ok && response.text.toUtf8().size() > m_config.maxAnswerBytes) {
        response.ok = false;
        response.error = QStringLiteral("answer of %1 bytes exceeds llm.max_answer_bytes (%2); not used")
                             .arg(response.text.toUtf8().size())
                             .arg(m_config.maxAnswerBytes);
        response.text.clear();
    }
    // One commit: the paid answer, the run's totals and what the answer leads to (candidates, the next
    // prompts). Nothing acts on the answer before it is stored: requests made here leave after the commit.
    m_owner->inBatch([&] {
        const qint64 id = record(base, response, callId, true);
        if (!id)
            return;
        answer(response, id);
        for (const auto &follower : followers)
            follower(response);
    });
}

void PaidCallLedger::cancel()
{
    m_held.clear();
    const auto replies = m_replies;
    for (const QPointer<LlmReply> &reply : replies)
        if (reply)
            reply->abort();
}

void PaidCallLedger::abandon()
{
    const auto replies = m_replies;
    for (const QPointer<LlmReply> &reply : replies) {
        if (!reply)
            continue;
        connect(reply, &LlmReply::finished, reply, &QObject::deleteLater);
        reply->abort();
    }
}

double PaidCallLedger::estimatedCost(const ModelSpec &spec, const QString &prompt) const
{
    const RunInfo &run = m_owner->ledgerRun();
    const qint64 tokensOut = run.llmCalls > 0 ? qMax<qint64>(1, run.tokensOut / run.llmCalls) : 1000;
    return m_prices.cost(spec.provider, spec.model, prompt.size() / 4, tokensOut, 0).value_or(0.0);
}

} // namespace autocomp
