#pragma once

#include "llm/sse_parser.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QSet>
#include <QString>
#include <QUrl>

class QJsonObject;

namespace autocomp {

struct LlmRequest;

// One HTTP request as a wire format builds it, before authentication is added.
struct WireRequest
{
    QUrl url;
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
    bool stream = false;
};

// What a response said so far; a format fills it from stream events or from a whole body.
// Token counts are normalised: tokensIn includes cached input, tokensOut includes reasoning.
struct WireResult
{
    QString text;
    QString reasoning;
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    qint64 reasoningTokens = 0;
    qint64 cachedTokens = 0;
    QString stopReason;
    bool complete = false; // the format's terminal event (or a whole body) arrived
    QString error; // what the provider reported: an error event, a failed or incomplete response
    bool malformed = false; // the error is ours to tell: bytes that are not the format (the provider has answered)
};

// One provider wire format: request building and response/stream parsing. Stateless; LlmClient owns
// the queue, limits, retries and authentication, and picks the format by ModelSpec::wireFormat().
class WireFormat
{
public:
    virtual ~WireFormat();

    virtual QString name() const = 0;
    // `dropped` names body parameters the model rejected before (dotted paths for nested ones).
    virtual WireRequest build(const LlmRequest &request, const QSet<QString> &dropped) const = 0;
    virtual void feedEvent(const SseEvent &event, WireResult *result) const = 0;
    // A whole (non-streamed) response body; false with result->error set when it is not one.
    virtual bool parseBody(const QByteArray &body, WireResult *result) const = 0;
    // The provider's message from an error body; every format's shape is understood.
    virtual QString errorMessage(const QByteArray &body) const;

    // nullptr for an unknown name. The formats live as long as the program.
    static const WireFormat *forName(const QString &name);
    // OpenAI's reasoning models (o1, o3, o4, gpt-5...): they take reasoning effort and reject temperature.
    static bool isReasoningModel(const QString &model);
    // Removes each dotted path in `dropped` from `body`.
    static void dropParameters(QJsonObject *body, const QSet<QString> &dropped);
    // The base URL with `path` appended (path already percent-encoded where needed).
    static QUrl joinUrl(const QUrl &base, const QByteArray &path);
};

} // namespace autocomp
