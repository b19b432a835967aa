#pragma once

#include <QJsonObject>
#include <QString>

#include <optional>

// Files of an Autocomp output directory, shared by its export (autocomp_dir.cpp) and import
// (autocomp_dir_import.cpp). Each failure is a message naming the file in *error.

namespace autocomp {

// Written atomically (QSaveFile): a failed write leaves no half file.
bool writeText(const QString &path, const QString &text, QString *error);
bool writeJson(const QString &path, const QJsonObject &o, QString *error);
std::optional<QString> readText(const QString &path, QString *error);
// Reads a JSON object; a missing file is {} with *present = false.
std::optional<QJsonObject> readJsonObject(const QString &path, QString *error, bool *present = nullptr);
// "openai::gpt-5.2" -> "gpt-5.2"; Autocomp names files by the model without its provider, '/' made '_'.
QString fileModel(const QString &model);

} // namespace autocomp
