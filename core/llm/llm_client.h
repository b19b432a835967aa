#pragma once

#include "llm/model_spec.h"
#include "llm/sse_parser.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QQueue>
#include <QString>

#include <functional>
#include <optional>

class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

namespace autocomp {

struct LlmRequest {
    ModelSpec spec;
    QString system;
    QString prompt;
    std::optional<double> temperature = 0.7;
    int maxTokens = 8192;
    int sampleIndex = 0; // distinguishes otherwise identical requests (several samples of one prompt)
    bool stream = true;

    // sha256 over provider, model, base URL host, full prompt, parameters and sample index: the key under
    // which a paid response is stored and reused.
    QString hash() const;
};

struct LlmResponse {
    bool ok = false;
    QString text;       // visible answer, reasoning blocks removed
    QString reasoning;  // removed reasoning text
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double latencyMs = 0;
    int retries = 0;
    int httpStatus = 0;
    QString error;      // the provider's message, never containing credentials
    bool fromCache = false;
};

// One request in flight (or queued). Emits finished() exactly once.
class LlmReply : public QObject
{
    Q_OBJECT
public:
    const LlmRequest &request() const { return m_request; }
    const LlmResponse &response() const { return m_response; }
    bool isFinished() const { return m_finished; }
    void abort();

Q_SIGNALS:
    void finished();

private:
    friend class LlmClient;
    explicit LlmReply(LlmRequest request, QObject *parent) : QObject(parent), m_request(std::move(request)) {}

    LlmRequest m_request;
    LlmResponse m_response;
    bool m_finished = false;
    bool m_aborted = false;
    int m_attempt = 0;
    QElapsedTimer m_clock;
    QPointer<QNetworkReply> m_network;
    SseParser m_sse;
    QString m_streamText;
    QByteArray m_body;
    bool m_streamDone = false;
    QString m_streamError;
    bool m_totalTimedOut = false;
    QTimer *m_totalTimer = nullptr;
};

// Sends LLM requests through QNetworkAccessManager: many at once, limited per provider and globally,
// queued in arrival order, retried on transient failures as the official SDKs do.
class LlmClient : public QObject
{
    Q_OBJECT
public:
    explicit LlmClient(QObject *parent = nullptr);
    ~LlmClient() override;

    // The reply is a child of the client; delete it (deleteLater) once finished() was handled.
    LlmReply *send(const LlmRequest &request);

    void setMaxInFlightPerProvider(int limit) { m_perProviderLimit = qMax(1, limit); }
    void setMaxInFlight(int limit) { m_globalLimit = qMax(1, limit); }
    void setMaxRetries(int retries) { m_maxRetries = qMax(0, retries); }
    void setTotalTimeoutMs(int ms) { m_totalTimeoutMs = ms; }
    // Where API keys come from; the default reads the provider's usual environment variable.
    void setApiKeyLookup(std::function<QString(const QString &provider)> lookup) { m_keyLookup = std::move(lookup); }

    int inFlight() const { return m_inFlight; }
    int queued() const { return int(m_queue.size()); }

    // Splits "<think>...</think>" style reasoning blocks out of a response.
    static QString stripReasoning(const QString &text, QString *reasoning);
    // Seconds to wait before retry `attempt` (0-based), honouring server hints up to 120 s.
    static double backoffSeconds(int attempt, const QByteArray &retryAfterMs, const QByteArray &retryAfter, double random01);
    static bool isRetryableStatus(int status);

private:
    friend class LlmReply;
    void pump();
    // A cancelled reply that has no network request: queued ones leave the queue, ones waiting out a
    // retry backoff finish at once.
    void abortIdle(LlmReply *reply);
    void startAttempt(LlmReply *reply);
    void onReadyRead(LlmReply *reply);
    void onNetworkFinished(LlmReply *reply);
    void finish(LlmReply *reply);
    void retryOrFail(LlmReply *reply, const QString &error, double delaySeconds);
    QByteArray chatBody(const LlmRequest &request) const;

    QNetworkAccessManager *m_network;
    QQueue<QPointer<LlmReply>> m_queue;
    QHash<QString, int> m_inFlightPerProvider;
    int m_inFlight = 0;
    int m_perProviderLimit = 8;
    int m_globalLimit = 64;
    int m_maxRetries = 4;
    int m_totalTimeoutMs = 600000;
    std::function<QString(const QString &)> m_keyLookup;
};

} // namespace autocomp
