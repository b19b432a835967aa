#include "fake_llm_script.h"

#include <QDir>
#include <QFile>

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

namespace autocomp::test {

namespace {

// Thrown for script content errors; YAML::Exception covers syntax and type conversion errors.
struct ScriptError
{
    QString message;
};

QString qs(const std::string &s) { return QString::fromStdString(s); }

QString where(const YAML::Node &node)
{
    const YAML::Mark mark = node.Mark();
    if (mark.is_null())
        return {};
    return QStringLiteral(" (line %1)").arg(mark.line + 1);
}

void checkKeys(const YAML::Node &map, const std::set<std::string> &allowed, const QString &context)
{
    if (!map.IsMap())
        throw ScriptError{context + QStringLiteral(": expected a mapping") + where(map)};
    for (auto it = map.begin(); it != map.end(); ++it) {
        const std::string key = it->first.as<std::string>();
        if (!allowed.count(key))
            throw ScriptError{context + QStringLiteral(": unknown key '") + qs(key) + u'\'' + where(it->first)};
    }
}

int nonNegative(const YAML::Node &node, const QString &context)
{
    const int value = node.as<int>();
    if (value < 0)
        throw ScriptError{context + QStringLiteral(" must not be negative") + where(node)};
    return value;
}

FakeFault parseFault(const YAML::Node &node, const QString &context)
{
    const QString name = qs(node.as<std::string>());
    for (FakeFault fault : {FakeFault::None, FakeFault::ResetMidStream, FakeFault::MalformedJson, FakeFault::ErrorEvent,
                            FakeFault::NeverEnd, FakeFault::Drip, FakeFault::CloseBeforeAnswer, FakeFault::Endless}) {
        if (fakeFaultName(fault) == name)
            return fault;
    }
    throw ScriptError{context + QStringLiteral(": unknown fault '") + name + u'\'' + where(node)};
}

QRegularExpression parseRegex(const YAML::Node &node, const QString &context)
{
    QRegularExpression re(qs(node.as<std::string>()));
    if (!re.isValid())
        throw ScriptError{context + QStringLiteral(": invalid regular expression: ") + re.errorString() + where(node)};
    return re;
}

ScriptedResponse parseResponse(const YAML::Node &node, const QString &baseDir, const QString &context)
{
    checkKeys(node,
              {"content", "content_file", "reasoning", "usage", "delay_ms", "chunk_delay_ms", "status", "error_message",
               "headers", "fault", "gzip", "cut_at_limit"},
              context);
    ScriptedResponse response;
    if (node["content"] && node["content_file"])
        throw ScriptError{context + QStringLiteral(": give either content or content_file, not both") + where(node)};
    if (node["content"]) {
        response.content = qs(node["content"].as<std::string>());
    } else if (node["content_file"]) {
        const QString path = QDir(baseDir).filePath(qs(node["content_file"].as<std::string>()));
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            throw ScriptError{context + QStringLiteral(": cannot read content_file ") + path + QStringLiteral(": ")
                              + file.errorString()};
        response.content = QString::fromUtf8(file.readAll());
    }
    if (const YAML::Node usage = node["usage"]) {
        checkKeys(usage, {"prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens"},
                  context + QStringLiteral(" usage"));
        if (usage["reasoning_tokens"])
            response.reasoningTokens = nonNegative(usage["reasoning_tokens"],
                                                   context + QStringLiteral(" reasoning_tokens"));
        if (usage["cached_tokens"])
            response.cachedTokens = nonNegative(usage["cached_tokens"], context + QStringLiteral(" cached_tokens"));
        if (usage["prompt_tokens"])
            response.promptTokens = nonNegative(usage["prompt_tokens"], context + QStringLiteral(" prompt_tokens"));
        if (usage["completion_tokens"])
            response.completionTokens = nonNegative(usage["completion_tokens"],
                                                    context + QStringLiteral(" completion_tokens"));
    }
    if (node["reasoning"])
        response.reasoning = qs(node["reasoning"].as<std::string>());
    if (node["delay_ms"])
        response.delayMs = nonNegative(node["delay_ms"], context + QStringLiteral(" delay_ms"));
    if (node["chunk_delay_ms"])
        response.chunkDelayMs = nonNegative(node["chunk_delay_ms"], context + QStringLiteral(" chunk_delay_ms"));
    if (node["status"]) {
        response.status = node["status"].as<int>();
        if (response.status < 100 || response.status > 599)
            throw ScriptError{context + QStringLiteral(": status must be an HTTP status code") + where(node["status"])};
    }
    if (node["error_message"])
        response.errorMessage = qs(node["error_message"].as<std::string>());
    if (response.status != 200 && response.errorMessage.isEmpty())
        response.errorMessage = QStringLiteral("fake-llm-server: scripted status %1").arg(response.status);
    if (const YAML::Node headers = node["headers"]) {
        if (!headers.IsMap())
            throw ScriptError{context + QStringLiteral(": headers must be a mapping") + where(headers)};
        for (auto it = headers.begin(); it != headers.end(); ++it)
            response.headers.append({QByteArray::fromStdString(it->first.as<std::string>()),
                                     QByteArray::fromStdString(it->second.as<std::string>())});
    }
    if (node["fault"])
        response.fault = parseFault(node["fault"], context);
    if (node["gzip"])
        response.gzip = node["gzip"].as<bool>();
    if (node["cut_at_limit"])
        response.cutAtLimit = node["cut_at_limit"].as<bool>();
    return response;
}

ScriptRule parseRule(const YAML::Node &node, int index, const QString &baseDir)
{
    QString context = QStringLiteral("rule %1").arg(index + 1);
    checkKeys(node, {"name", "match", "model", "cycle", "responses"}, context);
    ScriptRule rule;
    rule.name = node["name"] ? qs(node["name"].as<std::string>()) : QStringLiteral("rule-%1").arg(index + 1);
    context = QStringLiteral("rule '%1'").arg(rule.name);
    if (node["match"]) {
        rule.match = parseRegex(node["match"], context + QStringLiteral(" match"));
        rule.hasMatch = true;
    }
    if (node["model"]) {
        rule.model = parseRegex(node["model"], context + QStringLiteral(" model"));
        rule.hasModel = true;
    }
    if (node["cycle"])
        rule.cycle = node["cycle"].as<bool>();
    const YAML::Node responses = node["responses"];
    if (!responses || !responses.IsSequence() || responses.size() == 0)
        throw ScriptError{context + QStringLiteral(": needs a non-empty list of responses") + where(node)};
    for (std::size_t i = 0; i < responses.size(); ++i)
        rule.responses.append(
            parseResponse(responses[i], baseDir, context + QStringLiteral(" response %1").arg(int(i) + 1)));
    return rule;
}

} // namespace

QString fakeFaultName(FakeFault fault)
{
    switch (fault) {
    case FakeFault::None: return QStringLiteral("none");
    case FakeFault::ResetMidStream: return QStringLiteral("reset_mid_stream");
    case FakeFault::MalformedJson: return QStringLiteral("malformed_json");
    case FakeFault::ErrorEvent: return QStringLiteral("error_event");
    case FakeFault::NeverEnd: return QStringLiteral("never_end");
    case FakeFault::Drip: return QStringLiteral("drip");
    case FakeFault::CloseBeforeAnswer: return QStringLiteral("close_before_answer");
    case FakeFault::Endless: return QStringLiteral("endless");
    }
    return {};
}

std::optional<FakeLlmScript> FakeLlmScript::parse(const QByteArray &yaml, const QString &baseDir, QString *error)
{
    FakeLlmScript script;
    try {
        const YAML::Node root = YAML::Load(yaml.toStdString());
        checkKeys(root, {"rules", "models"}, QStringLiteral("script"));
        const YAML::Node rules = root["rules"];
        if (!rules || !rules.IsSequence())
            throw ScriptError{QStringLiteral("script: 'rules' must be a list")};
        for (std::size_t i = 0; i < rules.size(); ++i)
            script.m_rules.append(parseRule(rules[i], int(i), baseDir));
        if (const YAML::Node models = root["models"]) {
            if (!models.IsSequence())
                throw ScriptError{QStringLiteral("script: 'models' must be a list") + where(models)};
            for (const YAML::Node &model : models)
                script.m_models.append(qs(model.as<std::string>()));
        }
    } catch (const ScriptError &e) {
        if (error)
            *error = e.message;
        return std::nullopt;
    } catch (const YAML::Exception &e) {
        if (error)
            *error = QStringLiteral("script: ") + qs(e.what());
        return std::nullopt;
    }
    if (script.m_models.isEmpty())
        script.m_models.append(QStringLiteral("fake-model"));
    return script;
}

std::optional<FakeLlmScript::Selection> FakeLlmScript::take(const QString &lastUserMessage, const QString &model)
{
    for (int i = 0; i < m_rules.size(); ++i) {
        ScriptRule &rule = m_rules[i];
        if (!rule.cycle && rule.served >= rule.responses.size())
            continue;
        if (rule.hasMatch && !rule.match.match(lastUserMessage).hasMatch())
            continue;
        if (rule.hasModel && !rule.model.match(model).hasMatch())
            continue;
        const int response = int(rule.served % rule.responses.size());
        ++rule.served;
        return Selection{i, response};
    }
    return std::nullopt;
}

} // namespace autocomp::test
