// The pure rules of LlmClient and its requests and responses (llm_client.h), apart from the client's
// queues and connections: a request's identity for the response cache, which HTTP statuses are retried and
// after how long, a model's reasoning blocks taken out of its answer, the parameter a provider's error
// names as unsupported, and whether an answer was cut at its token limit.
#include "llm/llm_client.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QRegularExpression>

#include <cmath>

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
    // Added only when set, so the keys of responses stored before these options existed stay valid.
    if (!spec.api.isEmpty())
        add(QStringLiteral("api=") + spec.api);
    if (!reasoningEffort.isEmpty())
        add(QStringLiteral("effort=") + reasoningEffort);
    if (thinkingBudget > 0)
        add(QStringLiteral("thinking=") + QString::number(thinkingBudget));
    return QString::fromLatin1(h.result().toHex());
}

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

double LlmClient::backoffSeconds(int attempt, const QByteArray &retryAfterMs, const QByteArray &retryAfter,
                                 double random01)
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

QString LlmClient::modelKey(const LlmRequest &request)
{
    return request.spec.provider + QLatin1Char('@') + request.spec.baseUrl.toString() + QStringLiteral("::")
        + request.spec.model;
}

QString LlmClient::unsupportedParameter(const QString &message)
{
    static const QRegularExpression s_patterns[] = {
        // OpenAI: "Unsupported parameter: 'temperature' is not supported with this model."
        //         "Unsupported value: 'temperature' does not support 0.7 with this model."
        QRegularExpression(QStringLiteral("[Uu]nsupported (?:parameter|value):? '([A-Za-z_][\\w.]*)'")),
        // Anthropic: "temperature: Extra inputs are not permitted"
        QRegularExpression(QStringLiteral("^([A-Za-z_][\\w.]*): Extra inputs are not permitted")),
        // Gemini: "Invalid JSON payload received. Unknown name \"temperature\" at 'generation_config'"
        QRegularExpression(QStringLiteral("Unknown name \"([A-Za-z_]\\w*)\"(?: at '([\\w.]+)')?")),
    };
    for (const QRegularExpression &pattern : s_patterns) {
        const QRegularExpressionMatch match = pattern.match(message);
        if (!match.hasMatch())
            continue;
        QString path = match.captured(1);
        // Gemini names the enclosing object in snake_case: generation_config -> generationConfig.
        QString parent = match.captured(2);
        if (!parent.isEmpty()) {
            static const QRegularExpression s_snake(QStringLiteral("_([a-z])"));
            QString camel;
            qsizetype last = 0;
            for (auto it = s_snake.globalMatch(parent); it.hasNext();) {
                const QRegularExpressionMatch m = it.next();
                camel += parent.mid(last, m.capturedStart() - last) + m.captured(1).toUpper();
                last = m.capturedEnd();
            }
            path = camel + parent.mid(last) + QLatin1Char('.') + path;
        }
        return path;
    }
    return {};
}

bool LlmResponse::cutAtTokenLimit() const
{
    static const QStringList s_cut{QStringLiteral("length"), QStringLiteral("max_tokens"), QStringLiteral("MAX_TOKENS"),
                                   QStringLiteral("max_output_tokens")};
    return s_cut.contains(stopReason);
}

} // namespace autocomp
