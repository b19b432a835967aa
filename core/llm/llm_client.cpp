#include "llm/llm_client.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTimer>

#include <cmath>

Q_LOGGING_CATEGORY(lcLlm, "autocomp.llm")

namespace autocomp {

QString LlmRequest::hash() const
{
    QCryptographicHash h(QCryptographicHash::Sha256);
    auto add = [&](const QString &part) {
        const QByteArray bytes = part.toUtf8();
        h.addData(QByteArray(QByteArray::number(bytes.size()) + ':'));
        h.addData(bytes);
    };
    add(spec.provider);
    add(spec.model);
    add(spec.baseUrl.host());
    add(system);
    add(prompt);
    add(temperature ? QString::number(*temperature, 'g', 6) : QStringLiteral("default"));
    add(QString::number(maxTokens));
    add(QString::number(sampleIndex));
    return QString::fromLatin1(h.result().toHex());
}

void LlmReply::abort()
{
    if (m_finished)
        return;
    m_aborted = true;
    if (m_network) {
        m_network->abort();
        return;
    }
    if (auto *client = qobject_cast<LlmClient *>(parent()))
        QMetaObject::invokeMethod(client, [client, self = QPointer<LlmReply>(this)] {
            if (self)
                client->abortIdle(self);
        }, Qt::QueuedConnection);
}

void LlmClient::abortIdle(LlmReply *reply)
{
    if (reply->m_finished || reply->m_network)
        return;
    const qsizetype queued = m_queue.indexOf(reply);
    if (queued >= 0) {
        m_queue.removeAt(queued);
        reply->m_response.error = QStringLiteral("cancelled");
        reply->m_finished = true;
        Q_EMIT reply->finished();
        return;
    }
    reply->m_response.error = QStringLiteral("cancelled");
    finish(reply); // it was waiting out a retry backoff: it holds an in-flight slot
}

LlmClient::LlmClient(QObject *parent) : QObject(parent), m_network(new QNetworkAccessManager(this))
{
    m_keyLookup = [](const QString &provider) {
        const QString variable = ModelSpec::apiKeyVariable(provider);
        QString key = variable.isEmpty() ? QString() : qEnvironmentVariable(variable.toLatin1().constData());
        if (key.isEmpty() && provider == QLatin1String("gcp"))
            key = qEnvironmentVariable("GOOGLE_API_KEY");
        return key;
    };
}

LlmClient::~LlmClient() = default;

QString LlmClient::stripReasoning(const QString &text, QString *reasoning)
{
    static const QRegularExpression s_block(QStringLiteral("<(think|thinking|reasoning)>(.*?)</\\1>"),
                                            QRegularExpression::DotMatchesEverythingOption);
    QString out = text;
    QStringList parts;
    auto it = s_block.globalMatch(text);
    while (it.hasNext())
        parts << it.next().captured(2).trimmed();
    out.remove(s_block);
    // A reasoning block that was opened but never closed swallows the rest of the answer: keep the text.
    if (reasoning)
        *reasoning = parts.join(QStringLiteral("\n\n"));
    return out.trimmed();
}

bool LlmClient::isRetryableStatus(int status)
{
    return status == 408 || status == 409 || status == 429 || status >= 500;
}

double LlmClient::backoffSeconds(int attempt, const QByteArray &retryAfterMs, const QByteArray &retryAfter, double random01)
{
    bool ok = false;
    if (!retryAfterMs.isEmpty()) {
        const double ms = retryAfterMs.trimmed().toDouble(&ok);
        if (ok && ms >= 0 && ms <= 120000)
            return ms / 1000.0;
    }
    if (!retryAfter.isEmpty()) {
        const double s = retryAfter.trimmed().toDouble(&ok);
        if (ok && s >= 0 && s <= 120)
            return s;
        // HTTP dates end in "GMT", which Qt's RFC 2822 parser does not read; "+0000" is the same instant.
        QString date = QString::fromLatin1(retryAfter.trimmed());
        if (date.endsWith(QLatin1String(" GMT")))
            date = date.chopped(4) + QStringLiteral(" +0000");
        const QDateTime when = QDateTime::fromString(date, Qt::RFC2822Date);
        if (when.isValid()) {
            const double delta = QDateTime::currentDateTimeUtc().msecsTo(when) / 1000.0;
            if (delta >= 0 && delta <= 120)
                return delta;
        }
    }
    const double base = std::min(0.5 * std::pow(2.0, attempt), 8.0);
    return base * (1.0 - 0.25 * random01);
}

LlmReply *LlmClient::send(const LlmRequest &request)
{
    auto *reply = new LlmReply(request, this);
    reply->m_clock.start();
    m_queue.enqueue(reply);
    QMetaObject::invokeMethod(this, &LlmClient::pump, Qt::QueuedConnection);
    return reply;
}

void LlmClient::pump()
{
    // Serve in arrival order, skipping requests whose provider is at its limit.
    for (qsizetype i = 0; i < m_queue.size() && m_inFlight < m_globalLimit;) {
        QPointer<LlmReply> reply = m_queue.at(i);
        if (!reply || reply->m_aborted) {
            if (reply && !reply->m_finished) {
                reply->m_response.error = QStringLiteral("cancelled");
                reply->m_finished = true;
                Q_EMIT reply->finished();
            }
            m_queue.removeAt(i);
            continue;
        }
        const QString provider = reply->m_request.spec.provider;
        if (m_inFlightPerProvider.value(provider) >= m_perProviderLimit) {
            ++i;
            continue;
        }
        m_queue.removeAt(i);
        ++m_inFlight;
        ++m_inFlightPerProvider[provider];
        startAttempt(reply);
    }
}

QByteArray LlmClient::chatBody(const LlmRequest &request) const
{
    QJsonArray messages;
    if (!request.system.isEmpty())
        messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")}, {QStringLiteral("content"), request.system}});
    messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("user")}, {QStringLiteral("content"), request.prompt}});
    QJsonObject body{{QStringLiteral("model"), request.spec.model}, {QStringLiteral("messages"), messages}};
    // OpenAI's own API names the limit max_completion_tokens; compatible servers (vLLM, Ollama, ...) know max_tokens.
    body.insert(request.spec.provider == QLatin1String("openai") ? QStringLiteral("max_completion_tokens") : QStringLiteral("max_tokens"),
                request.maxTokens);
    if (request.temperature)
        body.insert(QStringLiteral("temperature"), *request.temperature);
    if (request.stream) {
        body.insert(QStringLiteral("stream"), true);
        body.insert(QStringLiteral("stream_options"), QJsonObject{{QStringLiteral("include_usage"), true}});
    }
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

void LlmClient::startAttempt(LlmReply *reply)
{
    const LlmRequest &request = reply->m_request;
    if (request.spec.wireFormat() != QLatin1String("openai-chat")) {
        reply->m_response.error = QStringLiteral("provider '%1' (wire format %2) is not supported by this build's LLM client")
                                      .arg(request.spec.provider, request.spec.wireFormat());
        finish(reply);
        return;
    }
    reply->m_sse = {};
    reply->m_streamText.clear();
    reply->m_body.clear();
    reply->m_streamDone = false;
    reply->m_streamError.clear();

    QString base = request.spec.baseUrl.toString();
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    QNetworkRequest net(QUrl(base + QStringLiteral("/chat/completions")));
    net.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    net.setRawHeader("Accept", request.stream ? "text/event-stream" : "application/json");
    const QString key = m_keyLookup ? m_keyLookup(request.spec.provider) : QString();
    if (!key.isEmpty())
        net.setRawHeader("Authorization", "Bearer " + key.toUtf8());
    net.setTransferTimeout(120000); // idle: no bytes for 120 s
    // The cache key, so logs on both sides can tell a repeated request from a new one. Not a secret.
    net.setRawHeader("X-Autocomp-Request", request.hash().left(32).toLatin1());
    QNetworkReply *network = m_network->post(net, chatBody(request));
    reply->m_network = network;
    if (!reply->m_totalTimer) {
        reply->m_totalTimer = new QTimer(reply);
        reply->m_totalTimer->setSingleShot(true);
        connect(reply->m_totalTimer, &QTimer::timeout, reply, [reply] {
            reply->m_streamError = QStringLiteral("total timeout exceeded");
            reply->m_totalTimedOut = true;
            if (reply->m_network)
                reply->m_network->abort();
        });
        reply->m_totalTimer->start(m_totalTimeoutMs);
    }
    connect(network, &QNetworkReply::readyRead, reply, [this, reply] { onReadyRead(reply); });
    connect(network, &QNetworkReply::finished, reply, [this, reply] { onNetworkFinished(reply); });
}

void LlmClient::onReadyRead(LlmReply *reply)
{
    QNetworkReply *network = reply->m_network;
    if (!network)
        return;
    const QByteArray bytes = network->readAll();
    const int status = network->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const bool sse = network->header(QNetworkRequest::ContentTypeHeader).toString().contains(QLatin1String("event-stream"));
    if (!sse || status >= 400) {
        reply->m_body += bytes;
        return;
    }
    for (const SseEvent &event : reply->m_sse.feed(bytes)) {
        if (event.data == "[DONE]") {
            reply->m_streamDone = true;
            continue;
        }
        QJsonParseError parseError;
        const QJsonObject chunk = QJsonDocument::fromJson(event.data, &parseError).object();
        if (parseError.error != QJsonParseError::NoError) {
            reply->m_streamError = QStringLiteral("malformed stream chunk: %1").arg(parseError.errorString());
            continue;
        }
        if (chunk.contains(QStringLiteral("error"))) {
            reply->m_streamError = chunk.value(QStringLiteral("error")).toObject().value(QStringLiteral("message")).toString();
            if (reply->m_streamError.isEmpty())
                reply->m_streamError = QStringLiteral("error event in stream");
            continue;
        }
        const QJsonArray choices = chunk.value(QStringLiteral("choices")).toArray();
        if (!choices.isEmpty()) {
            const QJsonObject delta = choices.at(0).toObject().value(QStringLiteral("delta")).toObject();
            reply->m_streamText += delta.value(QStringLiteral("content")).toString();
            const QString reasoning = delta.value(QStringLiteral("reasoning_content")).toString();
            if (!reasoning.isEmpty())
                reply->m_response.reasoning += reasoning;
        }
        const QJsonObject usage = chunk.value(QStringLiteral("usage")).toObject();
        if (!usage.isEmpty()) {
            reply->m_response.tokensIn = usage.value(QStringLiteral("prompt_tokens")).toInteger();
            reply->m_response.tokensOut = usage.value(QStringLiteral("completion_tokens")).toInteger();
        }
    }
}

void LlmClient::onNetworkFinished(LlmReply *reply)
{
    QNetworkReply *network = reply->m_network;
    if (!network)
        return;
    network->deleteLater();
    onReadyRead(reply);
    reply->m_network = nullptr;
    const int status = network->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    reply->m_response.httpStatus = status;
    const QByteArray retryAfterMs = network->rawHeader("retry-after-ms");
    const QByteArray retryAfter = network->rawHeader("retry-after");

    if (reply->m_aborted) {
        reply->m_response.error = QStringLiteral("cancelled");
        finish(reply);
        return;
    }
    if (status >= 400) {
        const QJsonObject body = QJsonDocument::fromJson(reply->m_body).object();
        QString message = body.value(QStringLiteral("error")).toObject().value(QStringLiteral("message")).toString();
        if (message.isEmpty())
            message = QString::fromUtf8(reply->m_body.left(500)).trimmed();
        const QString error = QStringLiteral("HTTP %1: %2").arg(status).arg(message);
        if (isRetryableStatus(status))
            retryOrFail(reply, error, backoffSeconds(reply->m_attempt, retryAfterMs, retryAfter, QRandomGenerator::global()->generateDouble()));
        else {
            reply->m_response.error = error;
            finish(reply);
        }
        return;
    }
    if (network->error() != QNetworkReply::NoError) {
        QString error = reply->m_streamError.isEmpty() ? network->errorString() : reply->m_streamError;
        if (!reply->m_streamText.isEmpty())
            error += QStringLiteral(" (stream broke after %1 characters)").arg(reply->m_streamText.size());
        retryOrFail(reply, error, backoffSeconds(reply->m_attempt, {}, {}, QRandomGenerator::global()->generateDouble()));
        return;
    }
    const bool sse = network->header(QNetworkRequest::ContentTypeHeader).toString().contains(QLatin1String("event-stream"));
    QString text;
    if (sse) {
        if (!reply->m_streamError.isEmpty()) {
            retryOrFail(reply, reply->m_streamError, backoffSeconds(reply->m_attempt, {}, {}, QRandomGenerator::global()->generateDouble()));
            return;
        }
        if (!reply->m_streamDone) {
            retryOrFail(reply, QStringLiteral("stream ended before [DONE] after %1 characters").arg(reply->m_streamText.size()),
                        backoffSeconds(reply->m_attempt, {}, {}, QRandomGenerator::global()->generateDouble()));
            return;
        }
        text = reply->m_streamText;
    } else {
        QJsonParseError parseError;
        const QJsonObject body = QJsonDocument::fromJson(reply->m_body, &parseError).object();
        if (parseError.error != QJsonParseError::NoError) {
            retryOrFail(reply, QStringLiteral("malformed JSON response: %1").arg(parseError.errorString()),
                        backoffSeconds(reply->m_attempt, {}, {}, QRandomGenerator::global()->generateDouble()));
            return;
        }
        const QJsonObject message = body.value(QStringLiteral("choices")).toArray().at(0).toObject().value(QStringLiteral("message")).toObject();
        text = message.value(QStringLiteral("content")).toString();
        reply->m_response.reasoning += message.value(QStringLiteral("reasoning_content")).toString();
        const QJsonObject usage = body.value(QStringLiteral("usage")).toObject();
        reply->m_response.tokensIn = usage.value(QStringLiteral("prompt_tokens")).toInteger();
        reply->m_response.tokensOut = usage.value(QStringLiteral("completion_tokens")).toInteger();
    }
    QString reasoning;
    reply->m_response.text = stripReasoning(text, &reasoning);
    if (!reasoning.isEmpty())
        reply->m_response.reasoning += (reply->m_response.reasoning.isEmpty() ? QString() : QStringLiteral("\n\n")) + reasoning;
    if (reply->m_response.text.isEmpty()) {
        reply->m_response.error = QStringLiteral("the model returned an empty answer");
        finish(reply);
        return;
    }
    reply->m_response.ok = true;
    finish(reply);
}

void LlmClient::retryOrFail(LlmReply *reply, const QString &error, double delaySeconds)
{
    if (reply->m_attempt >= m_maxRetries || reply->m_aborted || reply->m_totalTimedOut) {
        reply->m_response.error = error;
        finish(reply);
        return;
    }
    qCInfo(lcLlm).noquote() << reply->m_request.spec.text << "attempt" << reply->m_attempt + 1 << "failed:" << error << "- retrying in"
                            << delaySeconds << "s";
    ++reply->m_attempt;
    reply->m_response.retries = reply->m_attempt;
    QTimer::singleShot(int(delaySeconds * 1000), reply, [this, reply] {
        if (reply->m_aborted) {
            reply->m_response.error = QStringLiteral("cancelled");
            finish(reply);
            return;
        }
        startAttempt(reply);
    });
}

void LlmClient::finish(LlmReply *reply)
{
    if (reply->m_finished)
        return;
    reply->m_finished = true;
    reply->m_response.latencyMs = double(reply->m_clock.nsecsElapsed()) / 1e6;
    if (reply->m_totalTimer)
        reply->m_totalTimer->stop();
    --m_inFlight;
    --m_inFlightPerProvider[reply->m_request.spec.provider];
    Q_EMIT reply->finished();
    QMetaObject::invokeMethod(this, &LlmClient::pump, Qt::QueuedConnection);
}

} // namespace autocomp
