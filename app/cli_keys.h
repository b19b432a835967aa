#pragma once

#include "llm/model_spec.h"

#include <QList>
#include <QStringList>
#include <QTextStream>

#include <functional>

// `autocomp keys set PROVIDER | list | delete PROVIDER`: API keys in the OS keychain. positional[0] is "keys".
int cmdKeys(const QStringList &positional);

// For `run` and `resume`: reports on `report` where each model's key comes from (never the key), reads the
// keychain once for providers without an environment key, and returns the lookup for LlmClient.
std::function<QString(const QString &)> loadApiKeys(const QList<autocomp::ModelSpec> &models, QTextStream &report);
